"""MiniWoB++ tasks outside the dev set, the bridge was not tuned on (`miniwob.py --set holdout`).

The dev set (policies.py) is what earlier rounds measured and fixed against; these tasks are the
widgets and forms it does not hold (menus, trees, dialogs, autocomplete, sliders, search results,
date and time boxes). Their policies follow the same rule: they see the page only through the
server's answers and are written once for every subject. Each group's policies live in their own
module, imported here so that they register in `POLICIES`.
"""

from __future__ import annotations

from . import holdout_clicks, holdout_forms, holdout_tasks  # noqa: F401 - they register their policies
from .holdout_clicks import TASKS as CLICKS
from .holdout_forms import TASKS as FORMS
from .holdout_tasks import TASKS as MORE

HOLDOUT = [*CLICKS, *FORMS, *MORE]
