"""The words, places and proportions the seeded data is made of, and the
random choices over them. Proportions are those of a mid-sized
manufacturer's records: most reports are near misses and hazards, and
incidents age through the workflow."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

from ehs_core.incidents.models import IncidentType, Severity, Status
from ehs_core.sites.models import AreaKind

FIRST_NAMES = ("Ada", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jamal", "Kira",
               "Luis", "Mei", "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sam", "Tariq", "Uma", "Victor",
               "Wen", "Ximena", "Yusuf", "Zoe")
LAST_NAMES = ("Adams", "Brooks", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Haddad", "Ivanova",
              "Johnson", "Kim", "Lopez", "Murphy", "Nguyen", "Okafor", "Patel", "Rossi", "Silva",
              "Tanaka", "Walsh")
SITE_PLACES = (
    ("Riverside Plant", "1200 River Rd", "Dayton", "OH", "45402", "America/New_York"),
    ("North Distribution Center", "88 Logistics Pkwy", "Joliet", "IL", "60431", "America/Chicago"),
    ("Gulf Terminal", "5 Harbor Way", "Baytown", "TX", "77520", "America/Chicago"),
    ("Mesa Assembly", "4100 E Valley Blvd", "Mesa", "AZ", "85204", "America/Phoenix"),
    ("Cascade Mill", "300 Timber Ln", "Eugene", "OR", "97402", "America/Los_Angeles"),
    ("Piedmont Works", "77 Industrial Dr", "Greenville", "SC", "29605", "America/New_York"),
    ("Front Range Fabrication", "950 Foundry St", "Pueblo", "CO", "81003", "America/Denver"),
    ("Lakeshore Foods", "12 Dock St", "Green Bay", "WI", "54303", "America/Chicago"),
    ("Bayou Chemicals", "2 Refinery Rd", "Lake Charles", "LA", "70601", "America/Chicago"),
    ("Valley Packaging", "640 Orchard Ave", "Fresno", "CA", "93706", "America/Los_Angeles"),
)
INDUSTRIES = (("336390", "Other motor vehicle parts manufacturing"), ("493110", "General warehousing"),
              ("325211", "Plastics material and resin manufacturing"), ("311999", "Food manufacturing"),
              ("332710", "Machine shops"), ("322211", "Corrugated box manufacturing"))
BUILDINGS = ("Main Building", "Warehouse", "Workshop", "Utilities Block")
AREAS = (("Loading Dock", AreaKind.area), ("Assembly Line 1", AreaKind.line),
         ("Assembly Line 2", AreaKind.line),
         ("Paint Shop", AreaKind.area), ("Maintenance Bay", AreaKind.area), ("Packing Line", AreaKind.line),
         ("Chemical Store", AreaKind.area), ("Office", AreaKind.other), ("Yard", AreaKind.other),
         ("Press Line", AreaKind.line), ("Cold Store", AreaKind.area), ("Boiler Room", AreaKind.other))
TITLES = {
    IncidentType.near_miss: ("Forklift nearly struck a pedestrian", "Pallet fell from racking, nobody hurt",
                             "Unsecured load shifted during transport",
                             "Worker almost slipped on spilled oil",
                             "Reversing truck close call", "Tool dropped from a mezzanine"),
    IncidentType.hazard: ("Damaged guard on conveyor", "Blocked fire exit", "Frayed electrical cable",
                          "Missing handrail on stairs", "Leaking hydraulic hose", "Poor lighting in aisle"),
    IncidentType.injury: ("Hand laceration while cutting banding", "Back strain lifting a box",
                          "Finger caught in press tooling", "Slip and fall on wet floor",
                          "Eye struck by metal fragment", "Burn from hot surface"),
    IncidentType.illness: ("Dermatitis after solvent contact", "Respiratory irritation from fumes",
                           "Heat stress on the shop floor", "Noise-induced hearing complaint",
                           "Nausea after chemical exposure"),
    IncidentType.property_damage: ("Forklift hit racking upright", "Truck damaged the dock door",
                                   "Crane load dropped onto machine", "Water leak damaged stock"),
    IncidentType.environmental: ("Diesel spill at fuel point", "Coolant released to drain",
                                 "Dust emission above permit", "Chemical drum leaking in yard"),
}
DESCRIPTIONS = (
    "It happened during the change of shift while the area was busy.",
    "The operator was following the written procedure at the time.",
    "Visibility was limited because of stacked material near the walkway.",
    "A contractor crew was working nearby on unrelated maintenance.",
    "The equipment had been reported as faulty the week before.",
    "Two people witnessed the event and gave statements to the supervisor.",
    "The floor had been cleaned shortly before and was still wet.",
    "Production was running above the usual rate to meet an order.",
    "The forklift horn and blue light were working normally.",
    "PPE was worn as required for the task.",
)
IMMEDIATE = ("Area cordoned off and supervisor informed.", "Machine locked out and tagged.",
             "First aid given on site.", "Spill contained with absorbent pads.",
             "Work stopped until the hazard was removed.", "Stock moved away from the walkway.")
LOCATION_DETAILS = ("Aisle {n}", "Bay {n}", "Dock door {n}", "Near column C{n}", "Station {n}",
                    "Rack row {n}")
INVESTIGATION_METHODS = ("5 whys", "Fishbone", "Fault tree", "ICAM", "Root cause map")
ROOT_CAUSE_CATEGORIES = ("equipment", "procedure", "training", "human factors", "environment", "management",
                         "design", "communication")
WHYS = ("The guard was removed for cleaning", "No check after maintenance", "Procedure did not cover it",
        "Training was overdue", "Supervisor was covering two areas", "Schedule pressure",
        "The hazard had been normalised")
ACTION_TITLES = ("Replace damaged guard", "Retrain the shift on the procedure", "Install mirror at junction",
                 "Mark pedestrian walkway", "Update the risk assessment", "Add inspection to checklist",
                 "Fit anti-slip flooring", "Relocate storage away from exit", "Repair lighting",
                 "Provide cut-resistant gloves")
ACTION_KINDS = ("engineering", "administrative", "ppe", "training", "elimination", "substitution")
COMMENTS = ("Photos added to the file.", "Spoke with the people involved.", "Waiting for the contractor.",
            "Discussed at the safety committee.", "Parts ordered.", "Checked again today: still fine.")

TYPE_WEIGHTS = ((IncidentType.near_miss, 34), (IncidentType.hazard, 24), (IncidentType.injury, 16),
                (IncidentType.illness, 5), (IncidentType.property_damage, 12),
                (IncidentType.environmental, 9))
SEVERITY_WEIGHTS = ((Severity.low, 40), (Severity.medium, 35), (Severity.high, 20), (Severity.critical, 5))
# Incidents age through the workflow: recent ones are still open.
STATUS_BY_AGE = (
    (3, ((Status.reported, 45), (Status.triage, 30), (Status.investigation, 12), (Status.actions, 8),
         (Status.verification, 2), (Status.closed, 3))),
    (14, ((Status.reported, 5), (Status.triage, 12), (Status.investigation, 25), (Status.actions, 33),
          (Status.verification, 10), (Status.closed, 15))),
    (60, ((Status.reported, 1), (Status.triage, 3), (Status.investigation, 10), (Status.actions, 22),
          (Status.verification, 9), (Status.closed, 55))),
    (None, ((Status.investigation, 1), (Status.actions, 1), (Status.verification, 1), (Status.closed, 97))),
)
# Reports cluster in working hours (local time of the site).
HOUR_WEIGHTS = (1, 1, 1, 1, 1, 2, 5, 8, 9, 9, 8, 7, 6, 8, 9, 8, 7, 5, 3, 2, 2, 2, 1, 1)


def weighted(rng: random.Random, pairs: Sequence[tuple[Any, int]]) -> Any:
    return rng.choices([value for value, _ in pairs], [weight for _, weight in pairs])[0]


def person_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def client_uuid(rng: random.Random, number: int) -> str:
    """A random UUID carrying the incident number in its last 32 bits, so it
    is unique even when the same seed is used again with --force."""
    return str(uuid.UUID(int=(rng.getrandbits(96) << 32) | (number & 0xFFFFFFFF), version=4))
