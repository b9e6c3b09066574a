"""When a data file last changed, as far as a stat can tell.

Lantide keeps what it learned of a data file (its registration, row count, the key facts
the result checks use, whether a Source Run tab reading it is up to date) for as long as
the file's stamp is the same. Size and modification time are not enough: a file overwritten
in place at the same size and its modification time set back (``rsync --inplace -t``, an
archive unpacked with fixed file times, ``touch -r``) keeps both, and Lantide would go on
answering from the old file. The status-change time (``st_ctime`` on POSIX) moves with
every write and every ``utime`` and cannot be set back, so the stamp's time is the later of
the two. On Windows ``st_ctime`` is the creation time, which adds nothing but never hurts.

A copied or restored workspace gets new status-change times, so its files are read again
once; so is a file whose permissions changed. Both cost a re-registration, never a wrong
answer.
"""

from __future__ import annotations

import os


def changed_ns(st: os.stat_result) -> int:
    """The later of the modification and status-change times, in nanoseconds."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def stamp(st: os.stat_result) -> tuple[int, int]:
    """(size, changed_ns): what Lantide compares to tell a file changed."""
    return st.st_size, changed_ns(st)
