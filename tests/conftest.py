pytest_plugins = ["ehs_core.testing", "ehs_core.browser_testing"]
