"""Time the 300 Log PDF of N cases without a database:
`python -m bench.pdf 100 1000 [--profile]`.

Builds N plausible log rows (long descriptions, every outcome and type
column used), cuts them into sheets as the job does (`printing.sheets`),
renders the form's template in parts and lays them out with WeasyPrint
(`printing.pdf_of_parts`), the very path of the background job minus the
database reads. Prints the wall and CPU seconds, the pages and the load
average, so that a change to the template or the stylesheet can be measured
on its own (bench/README.md, item 5).
"""

from __future__ import annotations

import argparse
import io
import os
import time
from typing import Any

OUTCOMES = ("G", "H", "I", "J")
TYPES = ("M1", "M2", "M3", "M4", "M5", "M6")


def rows(count: int) -> list[dict[str, Any]]:
    """`count` log rows as `log_rows` makes them."""
    made = []
    for i in range(count):
        outcome = OUTCOMES[i % 4]
        made.append({
            "caseNumber": f"2026-{i + 1:04d}",
            "employeeName": "Privacy case" if i % 17 == 0 else f"Worker {i} Name",
            "jobTitle": "Machine operator" if i % 3 else "",
            "dateOfInjury": f"2026-{i % 12 + 1:02d}-{i % 28 + 1:02d}",
            "whereOccurred": f"Assembly line {i % 9}, loading dock near the north gate",
            "description": (f"Case {i + 1}: laceration to the left hand and two fingers from the edge of a "
                            "sheet-metal panel while lifting it off the press; first aid then stitches"),
            "outcomeColumn": outcome, "typeColumn": TYPES[i % 6],
            "daysAway": (i % 12) if outcome == "H" else 0, "daysRestricted": (i % 7) if outcome == "I" else 0,
        })
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+", type=int)
    parser.add_argument("--profile", action="store_true", help="cProfile the last size, top 25 by own time")
    parser.add_argument("--workers", type=int, default=0,
                        help="worker processes (the job's osha.pdf_processes)")
    parser.add_argument("--out", help="write the last PDF here")
    args = parser.parse_args()

    from pypdf import PdfReader
    from pyramid.scripting import prepare

    from ehs_core.config import configure
    from ehs_core.sites.models import Site
    from ehs_plugins.osha.log import TOTAL_KEYS
    from ehs_plugins.osha.pages import labels, printing

    config = configure({"sqlalchemy.url": "sqlite://", "ehs.auto_migrate": "false", "ehs.plugins": "osha",
                        "ehs.huey_url": "", "ehs.session_secure": "false"})
    site = Site(id=1, name="Plant North", city="Springfield", state="MA")
    with prepare(registry=config.registry) as env:
        request = env["request"]
        common = {"site": site, "year": 2026, "company": "Acme Manufacturing", **labels(request)}
        warm = printing.Printable("log300", "log300.html", "warm.pdf", {**common, "totals": dict.fromkeys(
            TOTAL_KEYS, 0), "sheet_count": 1}, "sheets", printing.sheets([])).html()
        printing.pdf_of_parts([warm] * max(1, args.workers), None, args.workers)  # fonts, stylesheet, workers
        for count in args.cases:
            found = printing.sheets(rows(count))
            totals = dict.fromkeys(TOTAL_KEYS, 0)
            for sheet in found:
                for key in TOTAL_KEYS:
                    totals[key] += sheet["totals"][key]
            values = {**common, "totals": totals, "sheet_count": len(found)}
            form = printing.Printable("log300", "log300.html", "log.pdf", values, "sheets", found)
            profiler = None
            if args.profile and count == args.cases[-1]:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            start, cpu = time.perf_counter(), time.process_time()
            first: list[float] = []

            def done(number: int, first: list[float] = first) -> None:
                if number == 1:
                    first.append(time.perf_counter())

            body = printing.pdf_of_parts(form.parts(), done, args.workers)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            if profiler is not None:
                import pstats

                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
            pages = len(PdfReader(io.BytesIO(body)).pages)
            print(f"{count} cases: {pages} pages, {wall:.1f} s wall, {cpu:.1f} s CPU, first part after "
                  f"{first[0] - start if first else wall:.1f} s, {len(body) // 1024} KiB, "
                  f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
            if args.out:
                with open(args.out, "wb") as file:
                    file.write(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
