"""h5loom's exception classes. Each also derives from the built-in exception a
Python user would reach for (a missing object is a KeyError, a bad selection an
IndexError, ...), so generic handlers keep working."""

from __future__ import annotations


class Error(Exception):
    """Base class of every h5loom error. ``code`` matches the C API's status codes."""

    code = 1

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class NotFoundError(Error, KeyError):
    """A missing file, group, dataset or attribute."""

    code = 2


class ExistsError(Error, ValueError):
    """Creating a name (or an exclusive file) that already exists."""

    code = 3


class SelectionError(Error, IndexError):
    """A selection outside the dataspace, of the wrong rank, or a buffer of the wrong size."""

    code = 4


class DatatypeError(Error, TypeError):
    """An element type that does not fit the dataset or attribute."""

    code = 5


class ReadOnlyError(Error, PermissionError):
    """Modifying a file opened read-only."""

    code = 6


class ConfigError(Error, ValueError):
    """An unknown engine, configuration key or knob value."""

    code = 7


class UsageError(Error, RuntimeError):
    """A call on a closed file, in the wrong order, or with an invalid name."""

    code = 8


class IOError(Error, OSError):  # noqa: A001 - the name matches the C++ and C APIs
    """The storage layer (HDF5, MPI-IO, POSIX) failed."""

    code = 9


class CollectiveMismatchError(Error, RuntimeError):
    """Ranks disagreed on a collective call (H5LOOM_CHECK_COLLECTIVE=1)."""

    code = 10


class CorruptionError(Error, OSError):
    """A file that fails its own consistency checks (not HDF5, truncated, bad checksum)."""

    code = 11


CLASSES = {cls.code: cls for cls in (Error, NotFoundError, ExistsError, SelectionError, DatatypeError,
                                     ReadOnlyError, ConfigError, UsageError, IOError,
                                     CollectiveMismatchError, CorruptionError)}
