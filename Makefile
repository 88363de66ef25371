# The commands of README.md. Each sets up what it needs (virtual environment, data cache).
VENV ?= .venv
export RECMETA_VENV := $(VENV)
export TQDM_DISABLE := 1

.PHONY: setup book test quick-book clean-book

## prepare the environment and nothing more: the virtual environment with what `recmeta run`
## needs (papermill, nbconvert, Jupyter Book) and the data cache (ML-100K, ml-latest-small);
## builds no page and runs no chapter
setup:
	scripts/bootstrap.sh book
	@echo "ready: .venv/bin/recmeta run --list shows the chapters"

## build the book, executing every chapter (full profile), into _build/html
book:
	scripts/bootstrap.sh book,test
	RECMETA_PROFILE=full $(VENV)/bin/jupyter-book build . --warningiserror --keep-going

## run the test suite (unit tests, and every chapter executed in the quick profile), one
## worker per core, a test file per worker (the longest first: tests/conftest.py): the book's
## tests share one build
test:
	scripts/bootstrap.sh book,test,bench,ray
	scripts/install-browser.sh
	$(VENV)/bin/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=25

## build the book with every chapter in its quick profile (what the tests check)
quick-book:
	scripts/bootstrap.sh book,test
	RECMETA_PROFILE=quick $(VENV)/bin/jupyter-book build . --warningiserror --keep-going

clean-book:
	$(VENV)/bin/jupyter-book clean . --all
