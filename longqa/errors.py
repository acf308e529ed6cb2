"""Errors the CLI turns into one-line messages and documented exit codes."""

EXIT_OK = 0
EXIT_ERROR = 1  # nothing done
EXIT_USAGE = 2
EXIT_PARTIAL = 3  # some inputs failed, the rest stored
EXIT_NO_EVIDENCE = 4  # `ask` found nothing relevant in the store


class LongqaError(Exception):
    """An expected failure with a message fit for one line on stderr."""

    exit_code = EXIT_ERROR


class InputError(LongqaError):
    """A document could not be read: corrupt, encrypted, empty, no text layer, wrong type."""

    def __init__(self, path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


class ModelError(LongqaError):
    """A model file or model server is missing, broken or unsuitable."""


class NotFoundError(LongqaError):
    """A document or node named on the command line is not in the store."""


class AmbiguousError(LongqaError):
    """A name on the command line fits more than one stored document; nothing is done."""


class StoreError(LongqaError):
    """The store cannot be opened or written: not a longqa store, read-only, disk full."""


class DocumentChanged(Exception):
    """A stored document was removed or stored again by another process while this one worked on
    it: the work is dropped for that document alone (not a LongqaError, which ends a batch)."""
