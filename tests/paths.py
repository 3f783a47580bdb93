"""Where the tests find the project and the shared corpus beside it (skipping cleanly when it is absent)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_DEV = CORPUS / "dev"
