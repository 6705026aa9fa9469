# The rsi app's first migration holds nothing: its models arrive with the review and observe
# increments of issue 13 (each its own migration after this one).
from django.db import migrations


class Migration(migrations.Migration):
    initial = True
    dependencies: list[tuple[str, str]] = []
    operations: list[migrations.operations.base.Operation] = []
