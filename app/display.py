"""Whether a window can open here, told before Qt is imported: one line saying how to look without a display."""

from __future__ import annotations

import os
import shlex
import sys

# Qt platforms that draw nowhere a person can see: the window would run, invisible, until killed.
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc")


def no_display_reason(environ: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no window can be shown here (None: one can)."""
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    qpa = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if qpa in HEADLESS_PLATFORMS:
        return f"QT_QPA_PLATFORM is {qpa}, which shows no window"
    if qpa:
        return None  # the user chose a platform: Qt is told to use it
    if plat.startswith("linux") and not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        return "DISPLAY and WAYLAND_DISPLAY are unset"
    return None


def no_display_line(reason: str, file: str | None = None) -> str:
    """The one line said instead of starting the window."""
    target = shlex.quote(file) if file else "FILE"
    return (
        f"foldscope: no display ({reason}), so the window cannot open; a first look without one: "
        f"`foldscope --screenshot out.png {target}` (the window as a PNG), `foldscope inspect {target}` "
        f"(the command line; `foldscope --help` lists it), `foldscope report {target} -o report.html` (a page for "
        "any browser)"
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m foldscope.app.display [FILE]`: exit 0 when a window can open, else the line on stderr and 1."""
    args = sys.argv[1:] if argv is None else argv
    reason = no_display_reason()
    if reason is None:
        return 0
    print(no_display_line(reason, args[0] if args else None), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
