/*
 * The one wire contract between the Storm shim (Java, in Nimbus) and the Python brain.
 *
 * Java code is generated from this file at build time (storm_plugin/pom.xml runs
 * Debian's `thrift` compiler); Python loads it at run time with thriftpy2
 * (scheduler_py/service/wire.py). Change it only in backward-compatible ways: new
 * fields are `optional` with a new id, ids are never reused.
 *
 * Units: CPU in percent of one core (Storm's `supervisor.cpu.capacity` convention,
 * 100 = one core); memory in MB.
 */

namespace java io.schedulerpy.storm.thrift
namespace py scheduler_wire

/** How a bolt subscribes to a stream (Storm's Grouping union, flattened). */
enum GroupingType {
  UNKNOWN = 0,
  SHUFFLE = 1,
  LOCAL_OR_SHUFFLE = 2,
  FIELDS = 3,
  ALL = 4,
  GLOBAL = 5,
  NONE = 6,
  DIRECT = 7,
  CUSTOM = 8
}

/** One worker slot (port) of a supervisor. */
struct Slot {
  1: required i32 port;
  /** Topology id currently holding the slot; absent when the slot is free. */
  2: optional string topology_id;
}

struct Supervisor {
  1: required string id;
  2: required string host;
  /** Rack from the configured host->rack mapping, when one is known. */
  3: optional string rack;
  4: required list<Slot> slots;
  5: required double total_cpu;
  6: required double total_memory_mb;
  7: required double available_cpu;
  8: required double available_memory_mb;
  /** Mbit/s of the host's network link, each way, as its supervisor.scheduler.meta declares
      it (scheduler.host.link.mbit); absent when not declared or not a number > 0. */
  9: optional double host_link_mbit;
  /** Mbit/s of its rack's uplink, each way (scheduler.rack.uplink.mbit), likewise. */
  10: optional double rack_uplink_mbit;
}

/** One input of a component: the upstream component and stream it subscribes to. */
struct InputStream {
  1: required string component;
  2: required string stream;
  3: required GroupingType grouping;
  /** Grouping fields, for FIELDS. */
  4: optional list<string> fields;
}

struct Component {
  1: required string id;
  2: required bool is_spout;
  /** True for Storm's own components (__acker, __system, __metrics...). */
  3: required bool is_system;
  4: required i32 parallelism;
  /** Declared CPU per executor (topology.component.cpu.pcore.percent). */
  5: required double cpu_per_executor;
  /** Declared on-heap + off-heap memory per executor. */
  6: required double memory_mb_per_executor;
  7: required list<InputStream> inputs;
}

/** A Storm executor: a contiguous range of task ids of one component. */
struct Executor {
  1: required i32 task_start;
  2: required i32 task_end;
  3: required string component;
}

struct ExecutorPlacement {
  1: required Executor executor;
  2: required string supervisor_id;
  3: required i32 port;
}

struct Topology {
  1: required string id;
  2: required string name;
  /** topology.workers */
  3: required i32 num_workers;
  4: required list<Component> components;
  5: required list<Executor> executors;
  /** Where the executors run now (empty for a new topology). */
  6: required list<ExecutorPlacement> current;
  /**
   * Cluster.needsScheduling(topology) this round, except false when the current assignment
   * is exactly the last plan the brain gave this topology (PLACE or KEEP) with every
   * executor assigned (Storm alone reports true whenever fewer workers than
   * topology.workers are used, which a brain plan may legitimately do).
   */
  7: required bool needs_scheduling;
  /**
   * Topology configuration entries the brain reads, JSON-encoded values:
   * every key starting with "scheduler." plus a few topology.* keys.
   */
  8: required map<string, string> conf;
}

/**
 * A supervisor Nimbus's BlacklistScheduler (`blacklist.scheduler.*`) blacklisted this round
 * (Cluster.isBlackListed): it is left out of ClusterSnapshot.supervisors, and no slot of it can
 * be assigned, but running placements may still name it.
 */
struct BlacklistedSupervisor {
  1: required string id;
  2: required string host;
}

struct ClusterSnapshot {
  /** Increments every Nimbus scheduling round. */
  1: required i64 round;
  2: required i64 timestamp_ms;
  3: required list<Supervisor> supervisors;
  /** Topologies the brain may place this round (never the ones it must not touch). */
  4: required list<Topology> topologies;
  5: optional string storm_version;
  /**
   * How long the shim waits for the reply (scheduler.brain.timeout.ms). The brain plans
   * within this minus a margin, splitting it over the topologies it plans.
   */
  6: optional i32 timeout_ms;
  /** Supervisors blacklisted this round (absent from `supervisors`); absent from older shims. */
  7: optional list<BlacklistedSupervisor> blacklisted_supervisors;
  /** Cluster.getBlacklistedHosts(): every blacklisted host, with or without a live supervisor. */
  8: optional list<string> blacklisted_hosts;
}

enum Decision {
  /**
   * Apply `placements`: every executor of the topology exactly once, on at most
   * topology.workers distinct slots.
   */
  PLACE = 1,
  /** The brain declines: the shim hands the topology to Storm's DefaultScheduler. */
  LEAVE_TO_STORM = 2,
  /** The current assignment is the plan: change nothing. */
  KEEP = 3
}

struct TopologyPlan {
  1: required string topology_id;
  2: required Decision decision;
  3: required list<ExecutorPlacement> placements;
  /** Human-readable: why this plan, or why the brain declined. Shown as topology status. */
  4: required string reason;
  5: required string algorithm;
}

struct ScheduleReply {
  1: required list<TopologyPlan> plans;
  2: required string brain_version;
  /**
   * The answer to a sealed round is sealed too (scheduler_py/service/shim_auth.py,
   * SnapshotSigner.java): `sealed_reply` is a ScheduleReply holding the plans and the
   * brain_version (fields 1 and 2 only) serialized with the binary protocol, `reply_mac` the
   * HMAC-SHA256 under the shim key of "scheduler-py reply v1\n", then the round's `mac`, then
   * those bytes; `plans` is then empty. A shim that sealed its round applies only a sealed
   * reply whose MAC is right, so a peer without the key on the brain's port cannot feed
   * Nimbus a plan, nor replay an answer to another round. Absent from the answer to an
   * unsealed round.
   */
  3: optional binary sealed_reply;
  4: optional binary reply_mac;
}

/** The brain could not produce any reply for this snapshot (the shim falls back). */
exception BrainError {
  1: required string message;
  /**
   * True when the call was refused only because it carries no operator secret (or a wrong
   * one) and the brain was started with `serve --require-auth-reads`: a client holding the
   * secret asks the brain to prove it holds it too (prove_operator_secret) and calls again
   * with the secret (scheduler_py/service/client.py). Absent from older brains.
   */
  2: optional bool needs_operator_secret;
}

service SchedulerBrain {
  /**
   * One scheduling round. Topologies missing from the reply are left to Storm.
   *
   * The shim sends the round sealed (scheduler_py/service/shim_auth.py): `sealed_snapshot` is
   * the ClusterSnapshot serialized with the binary protocol, `mac` the HMAC-SHA256 of
   * "scheduler-py snapshot v1\n" followed by those bytes, under the key in the file
   * scheduler.brain.key.file names; `snapshot` is then absent. A round with `snapshot` only
   * (an older shim) is refused with a BrainError unless the brain was started with
   * --allow-unauthenticated-rounds, and even then it never drives a reconfiguration.
   */
  ScheduleReply schedule(1: ClusterSnapshot snapshot, 2: binary sealed_snapshot, 3: binary mac)
    throws (1: BrainError error),

  /**
   * Liveness probe; returns the brain's version. Open to every peer, also under
   * `serve --require-auth-reads`: it tells nothing about the cluster.
   */
  string ping(),

  /**
   * Operator control (`scheduler-py replan`; the shim never calls it): plan the running
   * topology `topology` (its name or id) again with `algorithm` (empty: its configured one)
   * under the current costs. Returns a JSON report (proposed placement, predicted gain,
   * workers that would restart). Unless `dry_run`, the brain also starts the drain-out
   * reconfiguration and the report carries its `reconfiguration_id`; follow it with
   * `history`. Unless `dry_run`, `secret` must be the operator secret
   * (scheduler_py/service/auth.py); a wrong or missing one is refused with a BrainError. A
   * `dry_run` needs it only when the brain was started with `serve --require-auth-reads`.
   */
  string replan(1: string topology, 2: string algorithm, 3: bool dry_run, 4: string secret,
                /** the algorithm's parameters as a JSON object; absent or empty: none */
                5: string params)
    throws (1: BrainError error),

  /**
   * Read-only (the dashboard): what the last scheduling round saw and decided, a JSON object
   * (scheduler_py/scheduling/status.py): supervisors, topologies with their placement, the
   * decision per topology, round latency and fallback counts. `secret`: the operator secret,
   * needed only when the brain was started with `serve --require-auth-reads` (then a missing
   * or wrong one is refused with a BrainError whose needs_operator_secret is true).
   */
  string status(1: string secret) throws (1: BrainError error),

  /**
   * Operator control (`scheduler-py history`): the topology's reconfiguration history, a JSON
   * array. `secret` as for status.
   */
  string history(1: string topology, 2: string secret) throws (1: BrainError error),

  /**
   * Operator control (`scheduler-py trigger pause|resume`, the dashboard; the shim never calls
   * it): pause (`paused` true) or resume the automatic reconfiguration trigger for the running
   * topology `topology` (name or id), or for every topology when `topology` is empty (a resume
   * then clears every pause). `secret` must be the operator secret, as for a changing
   * `replan`. Returns the trigger's state as a JSON object, which `status()` also carries
   * under "trigger" (scheduler_py/reconfig/pause.py).
   */
  string set_trigger_paused(1: bool paused, 2: string topology, 3: string secret)
    throws (1: BrainError error),

  /**
   * The brain proves it holds the operator secret before an operator tool sends it
   * (scheduler_py/service/client.py): the hex HMAC-SHA256, under the secret, of
   * "scheduler-py brain proof v1\n" followed by `challenge` (16 to 64 random bytes the tool
   * chose). A BrainError when the brain has no operator secret or the challenge is malformed.
   */
  string prove_operator_secret(1: binary challenge) throws (1: BrainError error)
}
