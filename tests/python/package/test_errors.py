"""Python against the error table (include/h5loom/error_codes.def, exported by the
extension as ``_core.error_table()``): every row is a class of h5loom with the
row's code and built-in base, a C++ exception of that kind arrives as it, and
the classes that existed before the table keep their names, codes and bases.
(tests/unit/test_error_table.cpp checks C against C++.)"""

import builtins
import pickle

import pytest

import h5loom
from h5loom import _core, _errors

ROWS = [tuple(r) for r in _core.error_table()]  # (class, code, built-in base, meaning, C name)

# What Python code may rely on: names, codes and bases as they were before the
# table; rows added later only add to this.
BEFORE = {
    "Error": (1, Exception, "LOOM_ERR_GENERIC"),
    "NotFoundError": (2, KeyError, "LOOM_ERR_NOT_FOUND"),
    "ExistsError": (3, ValueError, "LOOM_ERR_EXISTS"),
    "SelectionError": (4, IndexError, "LOOM_ERR_SELECTION"),
    "DatatypeError": (5, TypeError, "LOOM_ERR_DATATYPE"),
    "ReadOnlyError": (6, PermissionError, "LOOM_ERR_READ_ONLY"),
    "ConfigError": (7, ValueError, "LOOM_ERR_CONFIG"),
    "UsageError": (8, RuntimeError, "LOOM_ERR_USAGE"),
    "IOError": (9, OSError, "LOOM_ERR_IO"),
    "CollectiveMismatchError": (10, RuntimeError, "LOOM_ERR_COLLECTIVE_MISMATCH"),
    "CorruptionError": (11, OSError, "LOOM_ERR_CORRUPTION"),
}


def test_the_table_is_well_formed():
    assert ROWS[0][0] == "Error"
    codes = [code for _, code, _, _, _ in ROWS]
    assert len(set(codes)) == len(codes) and all(code > 0 for code in codes)
    assert len({name for name, *_ in ROWS}) == len(ROWS)
    assert sorted(_errors.CLASSES) == sorted(codes)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_every_row_is_a_class_with_its_code_and_base(row):
    name, code, base, meaning, c_name = row
    cls = getattr(h5loom, name)
    assert cls is getattr(_errors, name) is _errors.CLASSES[code]
    assert name in h5loom.__all__ and name in _errors.__all__
    assert cls.__name__ == name and cls.__module__ == "h5loom._errors"
    assert cls.code == code
    assert issubclass(cls, h5loom.Error) and issubclass(cls, getattr(builtins, base))
    assert cls.__doc__.startswith(meaning) and c_name in cls.__doc__
    err = cls("a message")
    assert str(err) == "a message" and err.code == code
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cls and str(again) == "a message"


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_every_cpp_kind_arrives_as_its_class(row):
    name, code, base, _, _ = row
    with pytest.raises(getattr(h5loom, name)) as caught:
        _core._raise_error(code, f"thrown in C++ as kind {code}")
    assert type(caught.value) is getattr(h5loom, name)
    assert isinstance(caught.value, getattr(builtins, base))
    assert str(caught.value) == f"thrown in C++ as kind {code}" and caught.value.code == code


def test_the_classes_from_before_the_table_stay():
    for name, (code, base, c_name) in BEFORE.items():
        cls = getattr(h5loom, name)
        assert cls.code == code and issubclass(cls, base), name
        assert (name, code, base.__name__, c_name) in [(r[0], r[1], r[2], r[4]) for r in ROWS], name
    from h5loom import CorruptionError, IOError, NotFoundError  # noqa: A004 - as before the table

    assert issubclass(NotFoundError, KeyError) and issubclass(IOError, OSError) and CorruptionError.code == 11
    assert IOError is not builtins.IOError
