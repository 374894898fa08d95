"""The instance catalogue: the machines a user could rent, one per row, as CSV (``tracegen plan`` reads it).

Format ``tracegen-catalogue``, version 1 (UTF-8)::

    # tracegen-catalogue version 1
    # further lines starting with '#' are comments; blank lines are skipped
    name,role,usd_per_hour,compute_speed,cores,link_bits_per_s,link_profile
    c5.2xlarge,both,0.34,1.0,8,2500000000,
    c5.12xlarge,ps,2.04,2.0,48,12000000000,profiles/c5.12xlarge.json

The first line names the format and its version; the header row follows, with every column, in this order:

    name             the instance type: 1 to 64 characters of ``A-Z a-z 0-9 . _ : + -``, unique in the file
    role             ``worker`` (only workers of this type), ``ps`` (only the parameter server), ``both``
    usd_per_hour     what one instance costs per hour, US dollars, from 0.000001 (a millionth of a dollar, a
                     thousand times below any instance's price: less, such as 5e-324, is a slip that the costs
                     divide down to $0) to 10000
    compute_speed    how fast its CPU runs the traced ops, relative to the node the trace was taken on:
                     2.0 = each op takes half as long (from 0.001 to 1000, as a worker's speed anywhere)
    cores            its CPU cores (vCPUs), from 0.01 to 4096; a PS gets them all
    link_bits_per_s  its network rate each way, bits per second, as the provider quotes it (1e3 to 1e13);
                     a whole number, plain or with an exponent: 2500000000 or 2.5e9
    link_profile     (may be empty) a ``link-profile.json`` measured by ``tracegen netbench`` between an
                     instance of this type as the PS and a client; a path relative to this CSV file. When
                     given, it pins the link of a PS of this type; when empty, only the rate is known. Its
                     payload rates, pull or push, may not exceed ``link_bits_per_s`` by more than 5 %: a
                     profile faster than the row's own rate is of another instance type (or the rate is)

How each column enters a prediction is :mod:`tracegen.instance`'s business; this module only reads and checks.
Every bad value raises :class:`CatalogueError`, one line naming the file, the line, the column and the value.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib

from parsers.csvfile import Cells, read_rows
from parsers.errors import TraceError, TraceFormatError, quoted
from parsers.files import broken_link
from parsers.linkprofile import LinkProfile, read_link_profile

FORMAT = "tracegen-catalogue"
VERSION = 1
COLUMNS = ("name", "role", "usd_per_hour", "compute_speed", "cores", "link_bits_per_s", "link_profile")
FIRST_LINE = f"# {FORMAT} version {VERSION}"
ROLES = ("worker", "ps", "both")
MAX_CATALOGUE_BYTES = 1 << 20
MAX_INSTANCES = 1000
# a millionth of a dollar an hour is a thousand times below the cheapest instance rented (about $0.001/h spot);
# > 0 alone took 5e-324, a subnormal that each cost divides down to 0.0: a free cluster, ranked first
MIN_USD_PER_HOUR, MAX_USD_PER_HOUR = 1e-6, 10_000.0
PROFILE_RATE_SLACK = 0.05  # a profile may measure this much above the row's rate (a shaper's burst), no more


class CatalogueError(TraceFormatError):
    """An instance catalogue that cannot be read or does not follow the schema."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Instance:
    """One row of the catalogue (module docstring); ``line`` is where it stands in the file."""

    name: str
    role: str
    usd_per_hour: float
    compute_speed: float
    cores: float
    link_bits_per_s: int
    link_profile: LinkProfile | None = None
    line: int = 0

    @property
    def can_work(self) -> bool:
        """Whether workers may be of this type."""
        return self.role in ("worker", "both")

    @property
    def can_serve(self) -> bool:
        """Whether the PS may be of this type."""
        return self.role in ("ps", "both")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Catalogue:
    """A whole catalogue file: its instances in file order."""

    instances: tuple[Instance, ...]
    source: str = ""

    @property
    def workers(self) -> tuple[Instance, ...]:
        """The types workers may be."""
        return tuple(i for i in self.instances if i.can_work)

    @property
    def servers(self) -> tuple[Instance, ...]:
        """The types the PS may be."""
        return tuple(i for i in self.instances if i.can_serve)


def read_catalogue(path: str | os.PathLike[str]) -> Catalogue:
    """Read and check an instance catalogue, and the link profiles it names (module docstring)."""
    source = os.fspath(path)
    rows = read_rows(source, fmt=FORMAT, version=VERSION, columns=COLUMNS, error=CatalogueError,
                     max_bytes=MAX_CATALOGUE_BYTES, max_rows=MAX_INSTANCES, what="instance types")
    folder = pathlib.Path(source).parent
    instances: list[Instance] = []
    seen: dict[str, tuple[str, int]] = {}  # by the name in lower case: c5.xlarge and C5.XLARGE are one type typed twice
    for cells in rows:
        line = cells.line
        inst = _instance(cells, folder)
        key = inst.name.casefold()
        if key in seen:
            name, first = seen[key]
            again = "" if name == inst.name else f" as {name!r} (names are the same whatever their case)"
            raise CatalogueError(f"{source}: line {line}, column 1 (name): {inst.name!r} is already on line "
                                 f"{first}{again}")
        seen[key] = (inst.name, line)
        instances.append(inst)
    catalogue = Catalogue(instances=tuple(instances), source=source)
    if not catalogue.workers or not catalogue.servers:
        missing = "worker" if not catalogue.workers else "ps"
        raise CatalogueError(f"{source}: no instance type may be a {missing} (a role of {missing} or both is "
                             "needed)")
    return catalogue


def _instance(c: Cells, folder: pathlib.Path) -> Instance:
    name = c.name(0)
    role = c.text(1)
    if role not in ROLES:
        raise c.fail(1, f"must be one of {', '.join(ROLES)}")
    usd, speed, cores = (c.number(2, low=MIN_USD_PER_HOUR, high=MAX_USD_PER_HOUR, low_open=False,
                                  rule="must be a number >= 0.000001 and <= 10000 (US dollars an hour: less than a "
                                       "millionth of a dollar is no instance's price)"),
                         c.number(3, low=0.001, high=1000, low_open=False),
                         c.number(4, low=0.01, high=4096, low_open=False))
    link = c.whole(5, low=1e3, high=1e13, unit="bits per second",  # '2.5Gbit/s', as --bandwidth takes it, was told
                   # only 'must be a number', of a cell that plainly holds one; the worker classes' column says this
                   rule="must be bits per second from 1e3 to 1e13 (a plain number: 2.5e9 for 2.5 Gbit/s)")
    profile = None
    if c.text(6):
        if role not in ("ps", "both"):
            raise c.fail(6, "a link profile pins the PS's link: only a ps or both row may give one")
        where = folder / c.text(6)
        try:
            is_dir, exists = where.is_dir(), where.exists()
        except OSError as exc:  # is_dir() says False only for a path that is missing; a name too long raises
            raise c.fail(6, f"cannot be read: {exc.strerror or exc} (a link profile, relative to the "
                            "catalogue)") from None
        if is_dir:
            raise c.fail(6, f"{str(where)!r} is a directory, not a file (a link profile, relative to the catalogue)")
        if not exists:  # a link round a loop or to a moved file 'exists' no more than a missing one: said as such
            what = broken_link(where) or "no such file"
            raise c.fail(6, f"{what}: {str(where)!r} (a link profile, relative to the catalogue)")
        try:
            profile = read_link_profile(where)
        except TraceError as exc:  # the profile's own message names its file and position; this names the row
            raise CatalogueError(f"{c.source}: line {c.line}, column 7 (link_profile): PS link profile "
                                 f"{quoted(c.text(6))}: {exc}") from None
        fastest_bits = 8 * max(max(q.pull_bytes_per_s, q.push_bytes_per_s) for q in profile.points)
        if fastest_bits > link * (1 + PROFILE_RATE_SLACK):
            raise c.fail(5, f"its link profile {c.text(6)!r} measured {fastest_bits / 1e6:.3g} Mbit/s of payload one "
                            "way, more than this rate carries: one of the two is not this instance type's")
    return Instance(name=name, role=role, usd_per_hour=usd, compute_speed=speed, cores=cores, link_bits_per_s=link,
                    link_profile=profile, line=c.line)
