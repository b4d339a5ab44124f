# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run dev test lint system-deps browser-deps install clean messages

system-deps:
	@$(PYTHON) -c "import ctypes.util, sys; sys.exit(0 if ctypes.util.find_library('magic') else 1)" || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "installing libmagic1 (python-magic needs it)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libmagic1; \
	  else \
	    echo "error: libmagic is missing; install the libmagic1 package (Debian/Ubuntu) or libmagic (Homebrew)" >&2; exit 1; \
	  fi; }
	@$(PYTHON) -c "import ctypes.util, sys; sys.exit(0 if ctypes.util.find_library('pango-1.0') and ctypes.util.find_library('pangoft2-1.0') else 1)" || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "installing libpango-1.0-0 and libpangoft2-1.0-0 (WeasyPrint makes the OSHA forms' PDFs with them)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core; \
	  else \
	    echo "error: Pango is missing; install libpango-1.0-0 and libpangoft2-1.0-0 (Debian/Ubuntu) or pango (Homebrew)" >&2; exit 1; \
	  fi; }

$(STAMP): pyproject.toml setup.cfg
	@$(MAKE) --no-print-directory system-deps
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	mkdir -p var/uploads
	$(BIN)/pserve development.ini

# For developers: templates are read again when they change (slower pages).
dev: $(STAMP)
	mkdir -p var/uploads
	PYRAMID_RELOAD_TEMPLATES=1 $(BIN)/pserve development.ini

# The browser tests drive Debian's Chromium through Playwright (no browser
# download): install it when it is missing, as system-deps does for libmagic;
# and Node with npm, under which the OpenID Connect tests run their provider.
browser-deps:
	@test -x /usr/bin/chromium || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (the browser tests drive it)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-dejavu-core; \
	  else \
	    echo "error: Chromium is missing; install Debian's chromium package (the browser tests need /usr/bin/chromium)" >&2; exit 1; \
	  fi; }
	@{ command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; } || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "installing nodejs and npm (the OpenID Connect tests run the npm package oidc-provider, which they install)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm; \
	  else \
	    echo "error: Node is missing; install node and npm (the OpenID Connect tests run a provider under Node)" >&2; exit 1; \
	  fi; }

test: $(STAMP) browser-deps
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check ehs_core ehs_plugins tests bench

PLUGINS_WITH_PAGES := analytics calosha kiosk osha
# The shipped locales besides English (the messages' own language); adding
# a language: add it here, run `make messages`, translate its .po files.
LOCALES := es
# Translations (Babel): extract every marked string of the core into its
# template, merge it into the catalogues and compile them.
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k translate -k _ -k _plural:1,2 --no-location --omit-header --sort-output \
	  -o ehs_core/locale/ehs.pot .
	for locale in en $(LOCALES); do test -f ehs_core/locale/$$locale/LC_MESSAGES/ehs.po || \
	  $(BIN)/pybabel init -D ehs -i ehs_core/locale/ehs.pot -d ehs_core/locale -l $$locale || exit 1; done
	$(BIN)/pybabel update -D ehs -i ehs_core/locale/ehs.pot -d ehs_core/locale --omit-header
	$(BIN)/pybabel compile --use-fuzzy -D ehs -d ehs_core/locale
	for plugin in $(PLUGINS_WITH_PAGES); do \
	  $(BIN)/pybabel extract -F ehs_plugins/$$plugin/babel.cfg -k translate -k _ --no-location \
	    --omit-header --sort-output -o ehs_plugins/$$plugin/locale/ehs_$$plugin.pot ehs_plugins/$$plugin && \
	  for locale in en $(LOCALES); do test -f ehs_plugins/$$plugin/locale/$$locale/LC_MESSAGES/ehs_$$plugin.po || \
	    $(BIN)/pybabel init -D ehs_$$plugin -i ehs_plugins/$$plugin/locale/ehs_$$plugin.pot \
	      -d ehs_plugins/$$plugin/locale -l $$locale || exit 1; done && \
	  $(BIN)/pybabel update -D ehs_$$plugin -i ehs_plugins/$$plugin/locale/ehs_$$plugin.pot \
	    -d ehs_plugins/$$plugin/locale --omit-header && \
	  $(BIN)/pybabel compile --use-fuzzy -D ehs_$$plugin -d ehs_plugins/$$plugin/locale || exit 1; done

clean:
	rm -rf $(VENV) var/ehs.sqlite* *.egg-info
