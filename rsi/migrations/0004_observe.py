# Observe (issue 13): feed subscriptions, one digest per (agent, day), candidate items.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rsi', '0003_review'),
        ('tenancy', '0005_tenant_l3_policy'),
    ]

    operations = [
        migrations.CreateModel(
            name='Digest',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateField()),
                ('runs', models.PositiveIntegerField(default=0)),
                ('feeds_ok', models.PositiveIntegerField(default=0)),
                ('feeds_failed', models.PositiveIntegerField(default=0)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='digests', to='tenancy.agentprofile')),
            ],
        ),
        migrations.CreateModel(
            name='FeedSubscription',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('url', models.URLField(max_length=2000)),
                ('keywords', models.JSONField(blank=True, default=list)),
                ('enabled', models.BooleanField(default=True)),
                ('last_status', models.CharField(choices=[('never', 'never fetched'), ('ok', 'fetched'), ('not_modified', 'not modified (304)'), ('failed', 'failed')], default='never', max_length=16)),
                ('last_error', models.CharField(blank=True, default='', max_length=32)),
                ('last_http_status', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('last_fetched_at', models.DateTimeField(blank=True, null=True)),
                ('etag', models.CharField(blank=True, default='', max_length=200)),
                ('last_modified', models.CharField(blank=True, default='', max_length=100)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='feed_subscriptions', to='tenancy.agentprofile')),
            ],
            options={
                'ordering': ['pk'],
            },
        ),
        migrations.CreateModel(
            name='DigestItem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('feed_url', models.URLField(max_length=2000)),
                ('key', models.CharField(max_length=64)),
                ('guid', models.CharField(blank=True, default='', max_length=500)),
                ('link', models.CharField(blank=True, default='', max_length=2000)),
                ('title', models.CharField(max_length=300)),
                ('summary', models.TextField(blank=True, default='')),
                ('published', models.DateTimeField(blank=True, null=True)),
                ('score', models.PositiveIntegerField(default=0)),
                ('matched', models.JSONField(blank=True, default=list)),
                ('proposal_id', models.CharField(blank=True, default='', max_length=64)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.agentprofile')),
                ('digest', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='items', to='rsi.digest')),
                ('subscription', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='items', to='rsi.feedsubscription')),
            ],
            options={
                'ordering': ['-score', '-published', 'pk'],
            },
        ),
        migrations.AddConstraint(
            model_name='digest',
            constraint=models.UniqueConstraint(fields=('agent', 'day'), name='rsi_digest_agent_day_unique'),
        ),
        migrations.AddConstraint(
            model_name='feedsubscription',
            constraint=models.UniqueConstraint(fields=('agent', 'url'), name='rsi_feed_agent_url_unique'),
        ),
        migrations.AddConstraint(
            model_name='digestitem',
            constraint=models.UniqueConstraint(fields=('agent', 'key'), name='rsi_digest_item_agent_key_unique'),
        ),
    ]
