pytest_plugins = ["ehs_core.testing"]
