"""The one rule for writing a sum of money too small for four decimals (every screen, the status line's client too)."""


def under_a_hundredth_of_a_cent(usd: float) -> str | None:
    """Money under $0.0001 that is not nothing: "<$0.0001" ("-<$0.0001" owed back), never $0.0000 or a rounded
    $0.0001; None for any other sum, which its screen writes with its own digits. Imports nothing (the status line's
    client starts on every prompt)."""
    if 0 < abs(usd) < 0.0001:
        return ("-" if usd < 0 else "") + "<$0.0001"
    return None


def usd_text(value: float | None) -> str:
    """A sum as the tables of the replay, `tune` and the cache report write it: four decimals, "<$0.0001" under them
    (under_a_hundredth_of_a_cent), "n/a" where no price is known."""
    return "n/a" if value is None else under_a_hundredth_of_a_cent(value) or f"${value:,.4f}"
