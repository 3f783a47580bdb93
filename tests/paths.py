"""Where the tests find the project and the shared corpus beside it (skipping cleanly when it is absent)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_DEV = CORPUS / "dev"

# The folders tests may read: dev/ and staged/ (a format not read yet, or read only lately). eval/ is kept for
# acceptance evaluation and is never read by a test.
READABLE = ("dev", "staged")


def corpus_glob(pattern: str) -> list[Path]:
    """The corpus files matching `pattern` under dev/ and staged/ (never eval/), sorted."""
    return sorted(p for folder in READABLE for p in (CORPUS / folder).glob(pattern))
