"""The status line's reading: the figures kept for a file that has not changed, the update of a file that grew, and
the warm reader, a process that keeps the sessions' engines in memory between runs, answers the runs on a socket in
the cache folder, and starts each update as soon as its transcript is written, so the next run's start-up and the
update overlap.

core.cli.statusline asks `kept` first (a file the same size as when its figures were kept), then the warm reader
(`ask`), then reads itself (`update`, or `detached`: in a child that stays as the warm reader). Every answer is for
the file as it stands when the run asks: a reader that read ahead reads on to the file's size then. This module
imports only the standard library at the top (the client imports it on every run); the measure is imported by the
process that reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from foldscope.core.cli.terminal_text import terminal_safe

TYPE_CHECKING = False  # typing costs the client 2 ms of its start-up: only the checker reads it
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


def short(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:  # as every command says it, not "[Errno 2] ..."
        text = f"{exc.filename}: cannot read the file: {exc.strerror}"
    else:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    text = terminal_safe(text)
    return text if len(text) <= 160 else text[:157] + "..."


IDLE = "FOLDSCOPE_STATUSLINE_IDLE"  # seconds a warm reader waits for the next run (default 600; 0: none is kept)
SOCKET = "reader.sock"


IN_MODIFY = 0x2  # inotify's event for a write to a watched file
LOOK = 0.02  # seconds between looks at the followed files' sizes where no inotify says when they are written
WAIT = 60.0  # seconds a run waits for a reader's answer (it may be reading for another run first), never longer
AHEAD = 1 << 20  # bytes of a file's growth looked through for a complete line before reading ahead


def kept(path: str, profile: str | None, folder: Path) -> dict[str, Any] | None:
    from foldscope.core.readout.status import load_figures

    st = os.stat(path)
    kept, snap = load_figures(folder, path, profile)
    if kept is not None and snap is not None and st.st_size == snap.size and snap.same_file(st, path):
        return {**kept, "_run": {"how": "kept", "bytes_read": 0}}
    return None


def update(path: str, profile: str | None, folder: Path, engines: dict | None = None) -> dict[str, Any]:
    """Read what the file gained under the session's lock: runs that overlap (Claude Code starts one every 300 ms
    while a response streams) wait for the one reading, then show what it kept instead of reading it again.
    `engines`: the warm reader's engines in memory, used (and not pickled again) while they match the kept state."""
    with _session_lock(folder, path):
        known = kept(path, profile, folder)
        if known is not None:
            return known
        building = _tokenizer_meanwhile()
        try:
            return _read(path, profile, folder, engines)
        except BaseException:
            if building is not None:
                building.join()  # never leave the build running into the interpreter's exit
            raise


@contextlib.contextmanager
def _session_lock(folder: Path, path: str) -> Iterator[None]:
    """The session's lock in the cache folder, held while its state is read and written (runs that overlap wait)."""
    from foldscope.core.model.folders import make_private_folder
    from foldscope.core.readout.status import state_paths

    make_private_folder(folder)
    with open(state_paths(folder, path)[0].with_suffix(".lock"), "a+b") as lock:
        try:
            import fcntl

            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        except ImportError:
            pass  # no POSIX locks (Windows): overlapping runs each read, and the last to save wins
        yield


def _read(path: str, profile: str | None, folder: Path, engines: dict | None) -> dict[str, Any]:
    """The figures of the file read on from the engine kept for it (in memory or pickled), else read afresh."""
    from foldscope.core.readout.status import StatusEngine, load_figures

    st = os.stat(path)
    _, snap = load_figures(folder, path, profile)
    engine = None
    if snap is not None and snap.same_file(st, path):
        engine = (engines or {}).get((path, profile))
        if engine is None or engine.follower.bytes_read != snap.read_to:
            engine = StatusEngine.load(folder, path, profile)
        if engine is not None and engine.follower.bytes_read != snap.read_to:
            engine = None
    how = "grown" if engine is not None else "read"
    if engine is None:
        engine = StatusEngine(path, profile)
    figures = engine.update()
    try:
        engine.save(folder, figures, pickled=engines is None)
    except OSError:
        pass  # a cache folder that cannot be written costs the next run a full read, never this one's line
    if engines is not None:
        engines[(path, profile)] = engine
        engine.last = figures
    return {**figures, "_run": {"how": how, "bytes_read": engine.bytes_read}}


_building: Any = None  # the thread building this process's tokenizer, once started


def _tokenizer_meanwhile() -> Any:
    """Start building the tokenizer on another thread when this process has not yet: quicktok's build (about half a
    second of CPU, the most of a run with no warm reader) lets the GIL go, so it runs beside the imports, the engine's
    unpickling and the price table's on the other core; the measure waits for it only if it needs it sooner
    (core.request.tokens builds under a lock). The thread, or None when one was started before."""
    global _building
    if _building is not None:
        return None
    import threading

    from foldscope.core.request import tokens

    def build() -> None:
        try:
            tokens.local_encoding()
        except Exception:
            pass  # the measure builds it again where it needs it, and says what is wrong

    _building = threading.Thread(target=build, name="tokenizer build", daemon=True)
    _building.start()
    return _building


def _idle() -> float:
    try:
        return max(0.0, float(os.environ.get(IDLE, "600")))
    except ValueError:
        return 600.0


def ask(folder: Path, path: str, profile: str | None) -> dict[str, Any] | None:
    """The figures from the warm reader, or None when there is none (or it does not answer: then this run reads)."""
    import _socket  # the socket module's enums and selectors cost the client about 3 ms; the bare socket does all this needs

    where = folder / SOCKET
    if not where.exists() or not hasattr(_socket, "AF_UNIX"):
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(WAIT)  # the reader may be reading for another run first
        conn.connect(str(where))
        conn.sendall(json.dumps({"path": path, "profile": profile}).encode() + b"\n")
        conn.shutdown(_socket.SHUT_WR)
        answer = _read_all(conn)
    except OSError:
        return None
    finally:
        conn.close()
    result = json.loads(answer) if answer else None
    if not isinstance(result, dict):
        return None
    if "_error" in result:
        raise RuntimeError(result["_error"])
    return result


def _read_all(conn: Any) -> bytes:
    chunks = []
    while chunk := conn.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _stale(where: Path) -> bool:
    """Whether a socket file is left by a reader no longer running (nothing accepts on it)."""
    import socket

    if not where.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(where))
        except ConnectionRefusedError:
            return True
        except OSError:
            return False
    return False


def serve(folder: Path, engines: dict, idle: float) -> None:
    """Answer runs on the folder's socket until none asks for `idle` seconds, the engines kept in memory (no imports,
    tokenizer build, price table or pickle per run), and read ahead: when a followed file gains a line, its update
    starts at once, so the next run finds its figures kept or ready sooner (unless the last one is still resting:
    Growth.rested). Then pickle the engines and end."""
    import select

    server = _listen(folder / SOCKET)
    if server is None:
        return
    bound = _inode(folder / SOCKET)  # this reader's socket file, to remove at the end only if it is still this one
    growth = Growth()
    try:
        asked = time.monotonic()  # reading ahead does not keep the reader: only runs that ask do
        while (left := idle - (time.monotonic() - asked)) > 0:
            growth.follow(path for path, _ in engines)
            ready, _, _ = select.select([server, *growth.fds()], [], [], growth.timeout(left, time.monotonic()))
            if server in ready:
                _answer(server, folder, engines)
                asked = time.monotonic()
            growth.woken(ready)
            if growth.due(time.monotonic()):
                started = time.monotonic()
                read_ahead(folder, engines)
                growth.rested(started, time.monotonic())  # a look that read nothing took next to no time
    finally:
        growth.close()
        for (path, _), engine in engines.items():  # pickled before the socket goes: a run that finds none finds them
            try:
                with _session_lock(folder, path):
                    engine.save(folder, engine.last)
            except Exception:
                pass
        server.close()
        if bound is not None and _inode(folder / SOCKET) == bound:  # never another reader's, started meanwhile
            (folder / SOCKET).unlink(missing_ok=True)


def _inode(where: Path) -> int | None:
    try:
        return where.stat().st_ino
    except OSError:
        return None


def _listen(where: Path) -> Any:
    """The reader's socket, listening; None when another reader answers already (or the path is too long for one)."""
    import socket

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            server.bind(str(where))
        except OSError:
            if not _stale(where):
                raise
            where.unlink(missing_ok=True)  # a reader that was killed left its socket: this one takes its place
            server.bind(str(where))
        server.listen(8)
    except OSError:
        server.close()
        return None
    server.settimeout(10)  # select said a run is there: never wait long on one that went away
    return server


def _answer(server: Any, folder: Path, engines: dict) -> None:
    """Answer one run: the figures for the file as it stands now (read on from wherever reading ahead stopped)."""
    try:
        conn, _ = server.accept()
    except OSError:
        return
    with conn:
        try:
            conn.settimeout(10)
            asked = json.loads(_read_all(conn))
            try:
                served = update(asked["path"], asked.get("profile"), folder, engines)
                data = json.dumps({**served, "_run": {**served["_run"], "served": True}})
            except Exception as exc:
                data = json.dumps({"_error": short(exc)})
            conn.sendall(data.encode())
        except (OSError, ValueError, KeyError, TypeError):
            pass


def read_ahead(folder: Path, engines: dict) -> list[str]:
    """Update each followed file that gained a complete line (or shrank) since its engine last read; the paths updated."""
    done = []
    for path, profile in list(engines):
        if gained_a_line(path, engines[(path, profile)].follower.bytes_read):
            try:
                update(path, profile, folder, engines)
                done.append(path)
            except Exception:
                pass  # the run that asks next reads it again and says what is wrong
    return done


def gained_a_line(path: str, read_to: int) -> bool:
    """Whether the file holds a complete line past `read_to` (a line still being written is not read until its newline
    comes, so an update for it would change nothing), or is shorter than that (it is read afresh)."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= read_to:
                return size < read_to
            handle.seek(read_to)
            return size - read_to > AHEAD or b"\n" in handle.read(size - read_to)
    except OSError:
        return False


class Growth:
    """When to read ahead. A followed file's write wakes the reader: inotify says so on Linux (the reader sleeps until
    then); elsewhere it looks at the files every LOOK seconds. A hint only: a run that asks is answered for the file as
    it stands. After reading ahead the reader rests as long as that took before it reads ahead again, so lines that
    come faster than it reads cost it at most half a core (they are read together); runs that ask never wait for it."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.watched: dict[str, int] = {}  # each path watched, and the inode watched (a file put in its place is watched anew)
        self.pending = False  # a write (or, with no inotify, the time to look) not yet read ahead
        self.rest_until = 0.0  # time.monotonic() before which the reader does not read ahead again
        self._add: Any = None
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)  # IN_NONBLOCK and IN_CLOEXEC are these
        except (OSError, AttributeError):  # no inotify (not Linux): look instead
            return
        if fd >= 0:
            self.fd, self._add = fd, libc.inotify_add_watch

    def follow(self, paths: Any) -> None:
        """Watch each path not watched yet, or whose file was replaced (one that cannot be watched is read when a run
        asks), and look at it once: what was written before the watch was set sends no event."""
        if self.fd is None:
            return
        for path in paths:
            try:
                inode = os.stat(path).st_ino
            except OSError:
                continue
            if self.watched.get(path) != inode and self._add(self.fd, os.fsencode(path), IN_MODIFY) >= 0:
                self.watched[path] = inode
                # A line written between the reader's last read and this watch wakes nothing: look once now.
                self.pending = True

    def fds(self) -> list[int]:
        return [] if self.fd is None else [self.fd]

    def timeout(self, left: float, now: float) -> float:
        """How long the reader may sleep: until a run asks or a file is written, the end of its rest when a write
        waits, the next look with no inotify, and never past `left` (its idle time)."""
        if self.pending:
            return max(0.0, min(left, self.rest_until - now))
        return min(left, LOOK if self.fd is None else left)

    def woken(self, ready: list) -> None:
        """Note what woke the reader: a write (its events read and dropped: every followed file is looked at), or
        with no inotify, any wake."""
        if self.fd is None:
            self.pending = True
        elif self.fd in ready:
            self.pending = True
            try:
                while os.read(self.fd, 1 << 16):
                    pass
            except OSError:  # BlockingIOError: none left
                pass

    def due(self, now: float) -> bool:
        return self.pending and now >= self.rest_until

    def rested(self, started: float, ended: float) -> None:
        """Reading ahead ran from `started` to `ended`: rest as long."""
        self.pending, self.rest_until = False, ended + (ended - started)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def detached(path: str, profile: str | None, folder: Path) -> dict[str, Any]:
    """Read in a grandchild of its own session and wait for its figures. Claude Code cancels a status line still
    running when the next update comes: the parent dies, the reader finishes and keeps what it read, so the next
    run starts from there. The reader then stays warm for the next runs (serve, FOLDSCOPE_STATUSLINE_IDLE). It holds
    none of the parent's standard streams (so nothing waits on it) and ends with os._exit (none of the parent's exit
    handlers run twice)."""
    down, up = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a session of its own, and the reader forked from it, so no one waits on the reader
        try:
            os.close(down)
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            engines: dict = {}
            try:
                data = json.dumps(update(path, profile, folder, engines))
            except Exception as exc:
                data = json.dumps({"_error": short(exc)})
            try:
                with os.fdopen(up, "wb") as handle:
                    handle.write(data.encode())
            except OSError:
                pass  # the run was cancelled: what was read is kept all the same
            if _idle() > 0 and engines:
                serve(folder, engines, _idle())
            else:
                for (kept_path, _), engine in engines.items():
                    with _session_lock(folder, kept_path):
                        engine.save(folder, engine.last)
        except BaseException:
            pass
        finally:
            os._exit(0)
    os.close(up)
    os.waitpid(pid, 0)
    with os.fdopen(down, "rb") as handle:
        answer = _read_within(handle, WAIT)
    result = json.loads(answer or b'{"_error": "the reading child ended without an answer"}')
    if "_error" in result:
        raise RuntimeError(result["_error"])
    return result


def _read_within(handle: Any, seconds: float) -> bytes:
    """What the reading child writes, waiting at most `seconds` for it (a status line that blocks blanks the bar)."""
    import select

    chunks: list[bytes] = []
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0 and select.select([handle], [], [], left)[0]:
        chunk = os.read(handle.fileno(), 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    raise TimeoutError(f"the reading child gave no answer within {seconds:.0f} s")
