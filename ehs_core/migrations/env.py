"""alembic environment: runs on the connection the `ehs` command hands in
(see ehs_core.migrations.upgrade), with the branch's own version table."""

from alembic import context

from ehs_core.db import Base
from ehs_core.incidents.search import SEARCH_OBJECTS

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise SystemExit("Run migrations with `ehs migrate CONFIG.ini`.")



def include_object(obj, name, type_, reflected, compare_to):
    # Each history has its own version table; none is part of the models.
    # Nor is the word search's PostgreSQL-only machinery (0009_search_words).
    return not (type_ == "table" and name.startswith("alembic_version")) and name not in SEARCH_OBJECTS


context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=config.attributes["version_table"],
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
    include_object=include_object,
)
with context.begin_transaction():
    context.run_migrations()
