"""The claim of each scheduled run: one row per (agent, kind, local day), so a run happens once
however many ticks, beats or workers see it due (issue 13)."""

from __future__ import annotations

from django.db import models

__all__ = ["RsiRun", "RunStatus"]


class RunStatus(models.TextChoices):
    QUEUED = "queued"  # claimed by a tick, its task sent
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class RsiRun(models.Model):
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="rsi_runs")
    kind = models.CharField(max_length=16)  # rsi.schedule_rules.RunKind
    day = models.DateField()  # the tenant's local day the run is about
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)  # ever started: the lease's fence, never reset
    # `attempts` when the run was last claimed (a day claimed again, by the nightly tick or an
    # owner's "run again"): the runs of this claim are `attempts - attempts_base`.  The fence keeps
    # counting across claims, so a worker of an earlier claim that wakes up cannot match a new one.
    attempts_base = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True, default="")  # an exception's class, never text
    # A review run of a day that was still under way (an owner's "Run today's review"): its report
    # is partial, so the nightly tick claims the day again once it is over (rsi.schedule.tick).
    partial = models.BooleanField(default=False)
    # While the run runs: until when its worker's lease holds (renewed as it works;
    # facade/leases.py).  A lease run out is a worker that died: the tick runs it again once.
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "kind", "day"], name="rsi_run_once")]
        indexes = [models.Index(fields=["status", "queued_at"])]

    def __str__(self) -> str:
        return f"{self.kind} of {self.agent_id} for {self.day} ({self.status})"

    @property
    def runs_started(self) -> int:
        """Runs started since the run was last claimed (what a lost lease is judged on)."""
        return self.attempts - self.attempts_base
