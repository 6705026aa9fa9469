# Issue 13: Monday's report carries the week over week (ReviewReport.week_over_week), and a review
# run of a day still under way is marked partial (RsiRun.partial) so the nightly tick claims that
# day again once it is over — the owner's "Run today's review" claims today's run.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rsi', '0005_governance'),
    ]

    operations = [
        migrations.AddField(
            model_name='reviewreport',
            name='week_over_week',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='rsirun',
            name='partial',
            field=models.BooleanField(default=False),
        ),
    ]
