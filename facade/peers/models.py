"""A2A tasks: what a peer agent sees of its conversation with an agent (issue 33).

A task is a view over the dialogue app's own records: its context is the peer's session, and
each message the peer sent to it is a principal message of that session, answered by a run.
Nothing of the turn is copied here but the state its latest run gave the task
(`rules.task_state`), kept so that ListTasks can filter and page on it in SQL."""

from __future__ import annotations

import uuid

from django.db import models


class PeerTask(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="+")
    # The key whose peer opened the task: the only caller that may read, continue or cancel it.
    peer = models.ForeignKey("tenancy.PeerCredential", on_delete=models.PROTECT, related_name="a2a_tasks")
    session = models.ForeignKey("dialogue.DialogueSession", on_delete=models.PROTECT, related_name="a2a_tasks")
    state = models.CharField(max_length=32, default="TASK_STATE_SUBMITTED")
    # The peer's id of the message the task is answering now (set when it begins): the sweep of
    # stranded tasks finds it by this when the process answering it died (peers/stranded.py).
    pending_message_id = models.CharField(max_length=64, blank=True, default="")
    # The language of the message it is answering (`conversation_language`), for what the task
    # says when no turn answered it.
    language = models.CharField(max_length=8, blank=True, default="")
    # Why the task ended without its turn's own answer: `stranded` (the sweep ended it).
    stop_reason = models.CharField(max_length=32, blank=True, default="")
    canceled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The task's status timestamp: its latest turn or its cancellation (ListTasks sorts by it).
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["peer", "-updated_at", "-id"], name="a2a_task_peer_updated"),
            # The sweep of stranded tasks: the working ones, oldest first.
            models.Index(
                fields=["updated_at"], name="a2a_task_working", condition=models.Q(state="TASK_STATE_WORKING")
            ),
        ]

    def __str__(self) -> str:
        return f"A2A task {self.pk} of peer {self.peer_id}"


class PeerTaskTurn(models.Model):
    """A peer's message to a task (the principal message of its session the run answers)."""

    task = models.ForeignKey(PeerTask, on_delete=models.CASCADE, related_name="turns")
    message = models.OneToOneField("dialogue.Message", on_delete=models.CASCADE, related_name="a2a_turn")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"turn of A2A task {self.task_id}: message {self.message_id}"


class AgentListing(models.Model):
    """An agent its owner put on the platform's list of agents (issue 33 §1: the platform may
    list the agents that opted in); no row, not listed.  The list shows what the agent's card
    says and where it is, nothing else."""

    agent = models.OneToOneField(
        "tenancy.AgentProfile", on_delete=models.CASCADE, primary_key=True, related_name="a2a_listing"
    )
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    listed_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"A2A listing of agent {self.agent_id}"
