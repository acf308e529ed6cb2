"""longqa: answer questions about long local documents with a small local model."""

import os as _os

# numpy's BLAS (OpenBLAS, in numpy's wheels) multiplies only small matrices here, and on a thread
# beside SQLite's queries (store/beside.py); its own worker threads spin waiting for work and take
# the core those queries need: a retrieval over 100,000 leaves cost 159 ms of CPU with them, 85
# without, and less wall time too. Set before numpy loads; a value the user set wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
