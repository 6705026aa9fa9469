import pytest
from django.db import transaction

from ledger.selectors import ledger_verify
from ledger.services import ledger_append


@pytest.mark.django_db
def test_append_and_verify():
    for i in range(5):
        with transaction.atomic():
            ledger_append(chain_id=99, event_type="t", entity_type="e", entity_id=i, actor_type="platform", actor_id="x", payload={"i": i})
    r = ledger_verify(chain_id=99)
    assert r.ok and r.checked == 5, r
