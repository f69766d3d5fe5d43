"""h5loom's exception classes, built from the error table the extension exports
(``h5loom._core.error_table()``, from include/h5loom/error_codes.def: the one
table of C++, C and Python). Each class also derives from the built-in exception
a Python user would reach for (a missing object is a KeyError, a bad selection
an IndexError, ...), so generic handlers keep working.

One class per row of the table, named as in C++ (NotFoundError, ...), with
the table's code as ``code`` and its meaning as the docstring; ``Error`` is the
base of all. ``CLASSES`` maps each code to its class.
"""

from __future__ import annotations

import builtins

from . import _core


def _describe(meaning: str, code: int, c_name: str, name: str) -> str:
    return (f"{meaning}\n\n``code`` is {code}: the C API's {c_name}, the C++ API's "
            f"h5loom::{name} (include/h5loom/error_codes.def).")


_TABLE = [tuple(row) for row in _core.error_table()]  # (class, code, built-in base, meaning, C name)
_BASE_NAME, _BASE_CODE, _BASE_PARENT, _BASE_MEANING, _BASE_C_NAME = _TABLE[0]


class Error(getattr(builtins, _BASE_PARENT)):  # type: ignore[misc]  # Exception
    code = _BASE_CODE

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


if _BASE_NAME != "Error":
    raise ImportError(f"h5loom's error table starts with {_BASE_NAME}, not the base class Error")
Error.__doc__ = _describe(_BASE_MEANING, _BASE_CODE, _BASE_C_NAME, _BASE_NAME)

CLASSES: dict[int, type[Error]] = {Error.code: Error}
__all__ = ["Error"]
for _name, _code, _parent, _meaning, _c_name in _TABLE[1:]:
    _cls = type(_name, (Error, getattr(builtins, _parent)), {
        "code": _code,
        "__doc__": _describe(_meaning, _code, _c_name, _name),
        "__module__": __name__,
    })
    globals()[_name] = _cls  # h5loom._errors.NotFoundError, ...
    CLASSES[_code] = _cls
    __all__.append(_name)
del _name, _code, _parent, _meaning, _c_name, _cls
