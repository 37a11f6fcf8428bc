package io.redlease.boot.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/** The observation of a {@code @LeaderOnly} call: its name, and its keys. */
public enum LeaderOnlyObservationDocumentation implements ObservationDocumentation {

    /**
     * One call of a {@code @LeaderOnly} method: a run inside its term (from its start to its end;
     * for a once-per-slot run, to its mark), or a call that did not run (started and stopped at
     * once). Started on the calling thread and current there while the method runs, so a traced
     * client's calls (fenced writes) are its children; a run per partition is one observation per
     * partition.
     */
    LEADER_ONLY_RUN {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>>
                getDefaultConvention() {
            return DefaultLeaderOnlyObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeyNames.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeyNames.values();
        }
    };

    /** The keys whose values are bounded: on the metrics and the spans. */
    public enum LowCardinalityKeyNames implements KeyName {

        /**
         * The election the call runs in (a partitioned election's name for a run per partition).
         */
        ELECTION {
            @Override
            public String asString() {
                return "redlease.election";
            }
        },

        /** The partition of a run per partition, or {@code none}. */
        PARTITION {
            @Override
            public String asString() {
                return "redlease.partition";
            }
        },

        /** The method, as {@code SimpleClassName.method}. */
        METHOD {
            @Override
            public String asString() {
                return "redlease.method";
            }
        },

        /**
         * How the call ended: {@code ran}, {@code skipped-not-leader}, {@code skipped-term-ended},
         * {@code skipped-no-partition}, {@code rejected}, {@code refused} or {@code cut-short}.
         */
        OUTCOME {
            @Override
            public String asString() {
                return "redlease.outcome";
            }
        }
    }

    /** The keys whose values are unbounded: on the spans only. */
    public enum HighCardinalityKeyNames implements KeyName {

        /** The fencing token of the run's term; absent for a call that did not run. */
        TOKEN {
            @Override
            public String asString() {
                return "redlease.token";
            }
        },

        /** The slot of a once-per-slot run (ISO-8601); absent for other calls. */
        SLOT {
            @Override
            public String asString() {
                return "redlease.slot";
            }
        },

        /** This instance's id in the election. */
        INSTANCE {
            @Override
            public String asString() {
                return "redlease.instance";
            }
        }
    }
}
