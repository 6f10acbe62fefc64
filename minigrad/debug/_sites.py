"""Where in the user's code something happened: the first stack frame outside the minigrad package.

Sites are kept as (code object, line) pairs — cheap to take on a hot-ish path — and turned into
"file:line" text only when a message is printed.
"""
import os
import sys

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _is_internal(filename):
    return filename.startswith(_PKG) or filename.startswith("<frozen ")


_internal_code = {}  # code object -> whether it is minigrad's (every backward asks for its caller)


def user_frame(depth=1):
    """The innermost frame (starting `depth` frames above the caller) whose code is not minigrad's."""
    f = sys._getframe(depth + 1)
    while f is not None:
        code = f.f_code
        internal = _internal_code.get(code)
        if internal is None:
            internal = _is_internal(code.co_filename)
            if len(_internal_code) < 4096:  # (code made on the fly, e.g. by exec, is not kept forever)
                _internal_code[code] = internal
        if not internal:
            break
        f = f.f_back
    return f


def user_site(depth=1):
    """(code, lineno) of the user's frame, or None when the whole stack is minigrad's."""
    f = user_frame(depth + 1)
    return None if f is None else (f.f_code, f.f_lineno)


def called_from_user(depth=1):
    """True when the frame `depth` above the caller is user code (not inside minigrad)."""
    return not _is_internal(sys._getframe(depth + 1).f_code.co_filename)


def fmt(site):
    """'file:line' for a site (the path relative to the working directory when it is below it)."""
    if site is None:
        return "<unknown>"
    code, line = site
    path = code.co_filename
    try:
        rel = os.path.relpath(path)
        path = rel if not rel.startswith("..") else path
    except ValueError:
        pass
    return f"{path}:{line}"


def fmt_full(site):
    """'file:line in function' for a site."""
    return "<unknown>" if site is None else f"{fmt(site)} in {site[0].co_name}"


def user_stack(limit=12):
    """The user's part of the current stack, innermost last, as traceback-style text lines."""
    import traceback
    frames = [fs for fs in traceback.extract_stack(sys._getframe(2)) if not _is_internal(fs.filename)]
    return traceback.format_list(frames[-limit:])
