"""longqa's tests, in folders that mirror the packages: tests/store/ tests longqa/store/,
tests/ask/search/ tests longqa/ask/search/, tests/ingest/ tests longqa/ingest.py. tests/end_to_end/
runs the whole tool with real models or hostile inputs, tests/bench/ the bench/ scripts; the files at
this level test longqa's top-level modules and the repository as a whole. Shared here: conftest.py
(fixtures), fakes.py (scripted models), ask_support.py (stores for `ask`), pdfgen.py (PDFs) and
command.py (the real `longqa` command in a subprocess)."""
