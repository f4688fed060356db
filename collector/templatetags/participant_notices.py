"""``{% participant_notices study %}``: the study page's notices about its participants' data:
scores that still include votes since withdrawn (with **Rescore without them**), the figures
computed before a change of the counted votes and being computed again, and when
``DATA_RETENTION_DAYS`` removes (or removed) the voters' identifiers; a study archived before it
finished says they are kept until it finishes, and says nothing when it holds none."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from collector.models import Study
from collector.participants import retention
from collector.studies import vote_sets

register = template.Library()


@register.inclusion_tag("staff/_participant_notices.html", takes_context=True)  # csrf_token passes
def participant_notices(context: dict[str, Any], study: Study) -> dict[str, Any]:
    removal = retention.removal_date(study)
    keep = retention.retention()
    return {
        "study": study,
        "withdrawn": study.withdrawn_votes,
        "stale": vote_sets.stale_figures(study),
        "removal": removal,
        "removed": study.identities_removed_at,
        "removal_past": removal is not None and removal <= timezone.now(),
        "retention_days": keep.days if keep is not None else None,
        "kept_until_finished": retention.kept_until_finished(study),
    }
