import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApprovalParams } from "../../src/engine/approvals.js";
import { type ApiHarness, startApiHarness } from "./support/api-harness.js";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness(import.meta.url);
});
afterAll(async () => {
  await api?.stop();
});

async function startApproval(amount: string, quorum: number, by: "integrator" | "admin" = "integrator") {
  const res = await api.as(by).post("/v1/workflows/apitest.approve/executions").send({ amount, quorum });
  const view = await api.waitFor(res.body.id, (b) => b.status === "waiting", "waiting for approval");
  const wait = (view.waitingFor as { kind: string; details: { paramsHash: string } }[])[0];
  if (!wait) throw new Error(`execution ${res.body.id} waits for nothing`);
  return { id: res.body.id as string, wait };
}

describe("approvals", () => {
  it("publishes the parameters, their hash and the quorum on the wait", async () => {
    const { id, wait } = await startApproval("100", 2);
    expect(wait).toMatchObject({
      kind: "approval",
      name: "release",
      details: { params: { amount: "100" }, paramsHash: hashApprovalParams({ amount: "100" }), quorum: 2 },
    });
    const list = await api.as("approver").get(`/v1/executions/${id}/approvals`);
    expect(list.body.pending).toEqual([
      expect.objectContaining({ name: "release", params: { amount: "100" }, quorum: 2 }),
    ]);
  });

  it("M-of-N: counts distinct approvers to the quorum, refuses double votes, records identity and role", async () => {
    const { id, wait } = await startApproval("250", 2);
    const url = `/v1/executions/${id}/approvals/release`;
    const vote = { decision: "approve", paramsHash: wait.details.paramsHash };
    const first = await api.as("approver").post(url).send(vote);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ approvals: 1, quorum: 2, outcome: "pending" });
    const approverVote = {
      name: "release",
      position: first.body.position,
      approver: {
        keyId: api.keyIds.approver,
        name: "approver",
        role: "approver",
        subject: "approver",
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
      decision: "approve",
      paramsHash: wait.details.paramsHash,
      reason: null,
    };
    // The answer names who voted what and when, not just a count.
    expect(first.body.votes).toEqual([approverVote]);
    const twice = await api.as("approver").post(url).send(vote);
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe("APPROVAL_DUPLICATE_VOTE");
    expect((await api.as("operator").get(`/v1/executions/${id}`)).body.status).toBe("waiting");
    const second = await api
      .as("approver2")
      .post(url)
      .send({ ...vote, reason: "checked the amount" });
    expect(second.body).toMatchObject({ approvals: 2, outcome: "approved" });
    const approver2Vote = {
      ...approverVote,
      approver: {
        ...approverVote.approver,
        keyId: api.keyIds.approver2,
        name: "approver2",
        subject: "approver2",
      },
      reason: "checked the amount",
    };
    expect(second.body.votes).toEqual([approverVote, approver2Vote]);
    expect(second.body.votes[0].approver.at).toBe(first.body.votes[0].approver.at);
    const done = await api.waitFor(id, (b) => b.status === "completed", "completed");
    expect(done.result).toMatchObject({ approved: true, approvers: ["approver", "approver2"] });
    const votes = await api.as("operator").get(`/v1/executions/${id}/approvals`);
    // The list reads the same votes, with the same moments, as the vote's answer showed.
    expect(votes.body.votes).toEqual(second.body.votes);
    const late = await api.as("admin").post(url).send(vote);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("APPROVAL_NOT_PENDING");
  });

  it("a rejection decides at once, with the rejecter and the reason", async () => {
    const { id, wait } = await startApproval("300", 2);
    const res = await api
      .as("approver")
      .post(`/v1/executions/${id}/approvals/release`)
      .send({ decision: "reject", paramsHash: wait.details.paramsHash, reason: "too much" });
    expect(res.body.outcome).toBe("rejected");
    const done = await api.waitFor(id, (b) => b.status === "completed", "completed");
    expect(done.result).toMatchObject({ approved: false, rejectedBy: "approver", reason: "too much" });
  });

  it("an approval is bound to the hash of the parameters shown: another hash is 409 APPROVAL_PARAMS_CHANGED", async () => {
    const { id, wait } = await startApproval("400", 1);
    const res = await api
      .as("approver")
      .post(`/v1/executions/${id}/approvals/release`)
      .send({ decision: "approve", paramsHash: hashApprovalParams({ amount: "4000" }) });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: "APPROVAL_PARAMS_CHANGED",
      details: { currentParamsHash: wait.details.paramsHash },
    });
    expect((await api.as("operator").get(`/v1/executions/${id}`)).body.status).toBe("waiting");
  });

  it("nobody approves their own request", async () => {
    const { id, wait } = await startApproval("500", 1, "admin");
    const res = await api
      .as("admin")
      .post(`/v1/executions/${id}/approvals/release`)
      .send({ decision: "approve", paramsHash: wait.details.paramsHash });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("SELF_APPROVAL_FORBIDDEN");
  });

  it("checks the approver's role and the request", async () => {
    const { id, wait } = await startApproval("600", 1);
    const url = `/v1/executions/${id}/approvals/release`;
    for (const who of ["integrator", "operator"] as const) {
      const res = await api
        .as(who)
        .post(url)
        .send({ decision: "approve", paramsHash: wait.details.paramsHash });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
    }
    const bad = await api.as("approver").post(url).send({ decision: "maybe", paramsHash: "abc" });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      "body.decision",
      "body.paramsHash",
    ]);
    const other = await api
      .as("approver")
      .post(`/v1/executions/${id}/approvals/other`)
      .send({ decision: "approve", paramsHash: wait.details.paramsHash });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("APPROVAL_NOT_PENDING");
    const signal = await api.as("integrator").post(`/v1/executions/${id}/signals/$approval:release`).send({});
    expect(signal.body.code).toBe("SIGNAL_NAME_RESERVED");
  });
});
