;; Leiningen project as `sparse quickstart` generates it.  Not used in this repository:
;; Leiningen's dependencies live on Clojars, which is out of reach here, so the topology
;; jar is built by deploy/build-topology-jar.sh instead (same layout as `lein jar` makes
;; from :resource-paths ["_resources"]: the Python sources under resources/).
(defproject linear "0.0.1-SNAPSHOT"
  :resource-paths ["_resources"]
  :target-path "_build"
  :min-lein-version "2.0.0"
  :jvm-opts ["-client"]
  :dependencies  [[org.apache.storm/storm-client "2.8.4"]]
  :jar-exclusions     [#"log4j\.properties" #"org\.apache\.storm\.(?!flux)" #"trident" #"META-INF" #"meta-inf" #"\.yaml"]
  :uberjar-exclusions [#"log4j\.properties" #"org\.apache\.storm\.(?!flux)" #"trident" #"META-INF" #"meta-inf" #"\.yaml"]
  )
