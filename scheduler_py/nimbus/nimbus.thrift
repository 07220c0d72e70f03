/*
 * The part of Apache Storm's Nimbus Thrift service (storm-client's storm.thrift, Storm 2.x)
 * that scheduler-py calls: cluster and topology summaries, a topology's conf, and the
 * activate / deactivate / rebalance / kill controls. Field ids and types are Storm's, so
 * this is wire-compatible with a Storm 2.8 Nimbus; fields we never read are left out (a
 * Thrift reader skips unknown fields) and every field is optional so that a newer or older
 * Nimbus that omits one does not break decoding.
 *
 * Loaded at run time by thriftpy2 (scheduler_py/nimbus/client.py).
 */

namespace py scheduler_nimbus

enum NumErrorsChoice {
  ALL,
  NONE,
  ONE
}

struct SupervisorSummary {
  1: optional string host;
  2: optional i32 uptime_secs;
  3: optional i32 num_workers;
  4: optional i32 num_used_workers;
  5: optional string supervisor_id;
  6: optional string version;
}

struct NimbusSummary {
  1: optional string host;
  2: optional i32 port;
  3: optional i32 uptime_secs;
  4: optional bool isLeader;
  5: optional string version;
}

struct TopologySummary {
  1: optional string id;
  2: optional string name;
  3: optional i32 num_tasks;
  4: optional i32 num_executors;
  5: optional i32 num_workers;
  6: optional i32 uptime_secs;
  7: optional string status;
  513: optional string sched_status;
}

struct ClusterSummary {
  1: optional list<SupervisorSummary> supervisors;
  3: optional list<TopologySummary> topologies;
  4: optional list<NimbusSummary> nimbuses;
}

struct ExecutorInfo {
  1: optional i32 task_start;
  2: optional i32 task_end;
}

struct GlobalStreamId {
  1: optional string componentId;
  2: optional string streamId;
}

struct SpoutStats {
  1: optional map<string, map<string, i64>> acked;
  2: optional map<string, map<string, i64>> failed;
  3: optional map<string, map<string, double>> complete_ms_avg;
}

struct BoltStats {
  1: optional map<string, map<GlobalStreamId, i64>> acked;
  2: optional map<string, map<GlobalStreamId, i64>> failed;
  3: optional map<string, map<GlobalStreamId, double>> process_ms_avg;
  4: optional map<string, map<GlobalStreamId, i64>> executed;
  5: optional map<string, map<GlobalStreamId, double>> execute_ms_avg;
}

union ExecutorSpecificStats {
  1: BoltStats bolt;
  2: SpoutStats spout;
}

struct ExecutorStats {
  1: optional map<string, map<string, i64>> emitted;
  2: optional map<string, map<string, i64>> transferred;
  3: optional ExecutorSpecificStats specific;
  4: optional double rate;
}

struct ExecutorSummary {
  1: optional ExecutorInfo executor_info;
  2: optional string component_id;
  3: optional string host;
  4: optional i32 port;
  5: optional i32 uptime_secs;
  7: optional ExecutorStats stats;
}

struct ErrorInfo {
  1: optional string error;
  2: optional i32 error_time_secs;
  3: optional string host;
  4: optional i32 port;
}

struct TopologyInfo {
  1: optional string id;
  2: optional string name;
  3: optional i32 uptime_secs;
  4: optional list<ExecutorSummary> executors;
  5: optional string status;
  6: optional map<string, list<ErrorInfo>> errors;
  513: optional string sched_status;
}

struct GetInfoOptions {
  1: optional NumErrorsChoice num_err_choice;
}

struct KillOptions {
  1: optional i32 wait_secs;
}

struct RebalanceOptions {
  1: optional i32 wait_secs;
  2: optional i32 num_workers;
  3: optional map<string, i32> num_executors;
  5: optional string topology_conf_overrides;
}

exception NotAliveException {
  1: optional string msg;
}

exception AuthorizationException {
  1: optional string msg;
}

exception InvalidTopologyException {
  1: optional string msg;
}

service Nimbus {
  void killTopologyWithOpts(1: string name, 2: KillOptions options)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  void activate(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  void deactivate(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  void rebalance(1: string name, 2: RebalanceOptions options)
    throws (1: NotAliveException e, 2: InvalidTopologyException ite, 3: AuthorizationException aze);
  ClusterSummary getClusterInfo() throws (1: AuthorizationException aze);
  NimbusSummary getLeader() throws (1: AuthorizationException aze);
  TopologyInfo getTopologyInfo(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfoWithOpts(1: string id, 2: GetInfoOptions options)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
  string getTopologyConf(1: string id)
    throws (1: NotAliveException e, 2: AuthorizationException aze);
}
