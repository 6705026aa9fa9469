from django.db import migrations, models


class Migration(migrations.Migration):
    """`rsi_simulate`'s scripted customers' sessions are marked (issue 26 §6): an owner sees them
    as simulated, and their requests never wait for the owner."""

    dependencies = [
        ("dialogue", "0011_live_session_continues"),
    ]

    operations = [
        migrations.AddField(
            model_name="dialoguesession",
            name="simulated",
            field=models.BooleanField(default=False),
        ),
    ]
