-- CreateEnum
CREATE TYPE "ScheduleOutcome" AS ENUM ('running', 'succeeded', 'empty', 'failed');

-- CreateEnum
CREATE TYPE "KeyedCommandStatus" AS ENUM ('queued', 'running', 'done', 'failed');

-- CreateTable
CREATE TABLE "engine_settings" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "engine_settings_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "replicas" (
    "id" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "backend_pid" INTEGER,
    "backend_start" TIMESTAMPTZ(6),
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "replicas_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "shard_owners" (
    "domain" TEXT NOT NULL,
    "shard" INTEGER NOT NULL,
    "owner_id" TEXT NOT NULL,
    "epoch" BIGINT NOT NULL,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "shard_owners_pkey" PRIMARY KEY ("domain","shard")
);

-- CreateTable
CREATE TABLE "schedules" (
    "name" TEXT NOT NULL,
    "cadence_ms" INTEGER NOT NULL,
    "registered_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_attempt_at" TIMESTAMPTZ(3),
    "last_window" TIMESTAMPTZ(3),
    "last_outcome" "ScheduleOutcome",
    "last_duration_ms" INTEGER,
    "last_success_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "schedule_runs" (
    "id" BIGSERIAL NOT NULL,
    "schedule" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    "outcome" "ScheduleOutcome" NOT NULL,
    "runner_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "duration_ms" INTEGER,
    "result" JSONB,
    "error" TEXT,

    CONSTRAINT "schedule_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "execution_rollups" (
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "workflow" TEXT NOT NULL,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "execution_rollups_pkey" PRIMARY KEY ("hour","workflow")
);

-- CreateTable
CREATE TABLE "rollup_hours" (
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "executions" INTEGER NOT NULL,
    "built_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rollup_hours_pkey" PRIMARY KEY ("hour")
);

-- CreateTable
CREATE TABLE "keyed_commands" (
    "id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "entity" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "command_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "key_limit" INTEGER NOT NULL DEFAULT 1,
    "request_hash" TEXT NOT NULL,
    "input" JSONB NOT NULL,
    "status" "KeyedCommandStatus" NOT NULL DEFAULT 'queued',
    "reply" JSONB,
    "error" JSONB,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "keyed_commands_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "keyed_entity_states" (
    "entity" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "state" JSONB NOT NULL,
    "version" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "keyed_entity_states_pkey" PRIMARY KEY ("entity","key")
);

-- CreateTable
CREATE TABLE "nonce_reservations" (
    "chain_id" BIGINT NOT NULL,
    "sender" TEXT NOT NULL,
    "nonce" BIGINT NOT NULL,
    "command_id" TEXT NOT NULL,
    "reserved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "nonce_reservations_pkey" PRIMARY KEY ("chain_id","sender","nonce")
);

-- CreateIndex
CREATE INDEX "replicas_domain_last_seen_idx" ON "replicas"("domain", "last_seen");

-- CreateIndex
CREATE INDEX "schedule_runs_started_at_idx" ON "schedule_runs"("started_at");

-- CreateIndex
CREATE UNIQUE INDEX "schedule_runs_schedule_window_start_key" ON "schedule_runs"("schedule", "window_start");

-- CreateIndex
CREATE UNIQUE INDEX "keyed_commands_seq_key" ON "keyed_commands"("seq");

-- CreateIndex
CREATE INDEX "keyed_commands_status_seq_idx" ON "keyed_commands"("status", "seq");

-- CreateIndex
CREATE INDEX "keyed_commands_entity_key_seq_idx" ON "keyed_commands"("entity", "key", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "keyed_commands_entity_command_id_key" ON "keyed_commands"("entity", "command_id");

-- CreateIndex
CREATE UNIQUE INDEX "nonce_reservations_command_id_key" ON "nonce_reservations"("command_id");

-- AddForeignKey
ALTER TABLE "schedule_runs" ADD CONSTRAINT "schedule_runs_schedule_fkey" FOREIGN KEY ("schedule") REFERENCES "schedules"("name") ON DELETE CASCADE ON UPDATE CASCADE;
