"""alembic environment: runs on the connection the `ehs` command hands in
(see ehs_core.migrations.upgrade), with the branch's own version table."""

from alembic import context

from ehs_core.db import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise SystemExit("Run migrations with `ehs migrate CONFIG.ini`.")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=config.attributes["version_table"],
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
