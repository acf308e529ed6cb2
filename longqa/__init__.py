"""longqa: answer questions about long local documents with a small local model."""

__version__ = "0.1.0"
