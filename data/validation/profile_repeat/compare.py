"""The campaign's link profiles measured again (data/README.md, "validation/profile_repeat/") beside the campaign's:
for each mode netbench measures, the change of each point's rate (both directions together) at every number of
connections measured in both profiles. Run from the repository root: python data/validation/profile_repeat/compare.py"""

from __future__ import annotations

import pathlib
import statistics

from parsers.linkprofile import LinkProfile, read_link_profile

HERE = pathlib.Path(__file__).resolve().parent
CAMPAIGN = HERE.parent
MODES = ("pull", "push", "both", "cycle")


def changes(stored: LinkProfile, again: LinkProfile, mode: str) -> dict[int, float]:
    """Per number of connections measured in both: ``again``'s rate over ``stored``'s, minus one."""
    before = {p.connections: p.pull_bytes_per_s + p.push_bytes_per_s for p in stored.of_mode(mode)}
    return {p.connections: (p.pull_bytes_per_s + p.push_bytes_per_s) / before[p.connections] - 1
            for p in again.of_mode(mode) if before.get(p.connections)}


def rows() -> list[dict[str, object]]:
    """Per configuration measured again, the test set's first: ``set/name`` and, per mode, the changes by
    connections."""
    found: list[dict[str, object]] = []
    for folder in sorted(HERE.glob("*/*/trace"), key=lambda f: (f.parts[-3] != "test", f.parts[-2])):
        group, name = folder.parts[-3], folder.parent.name
        stored = read_link_profile(CAMPAIGN / group / name / "trace" / "link-profile.json")
        again = read_link_profile(folder / "link-profile.json")
        found.append({"name": f"{group}/{name}", "date": again.date}
                     | {mode: changes(stored, again, mode) for mode in MODES})
    return found


def main() -> None:
    """Print the table."""
    table = rows()
    print("| configuration | measured again | " + " | ".join(f"{m}: change by connections" for m in MODES) + " |")
    print("|---|---|" + "---|" * len(MODES))
    for row in table:
        cells = [", ".join(f"{k}: {v:+.1%}" for k, v in sorted(row[m].items())) for m in MODES]  # type: ignore[attr-defined]
        print(f"| {row['name']} | {row['date']} | " + " | ".join(cells) + " |")
    for mode in MODES:
        moved = [abs(v) for row in table for v in row[mode].values()]  # type: ignore[attr-defined]
        if moved:
            print(f"{mode}: median |change| {statistics.median(moved):.1%}, largest {max(moved):.1%} "
                  f"({len(moved)} points)")


if __name__ == "__main__":
    main()
