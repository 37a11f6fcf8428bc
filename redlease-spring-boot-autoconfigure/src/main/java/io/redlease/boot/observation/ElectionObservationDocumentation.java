package io.redlease.boot.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/** The observation of an election transition: its name, and its keys. */
public enum ElectionObservationDocumentation implements ObservationDocumentation {

    /**
     * This instance won a term of an election, or its term ended: one observation per transition,
     * started and stopped at once on the election's observer lane, with no parent. A handful per
     * term, so it is the only trace redlease starts by itself.
     */
    ELECTION_TRANSITION {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>>
                getDefaultConvention() {
            return DefaultElectionObservationConvention.class;
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

        /** The election (for a partition's elector, the partition's election name). */
        ELECTION {
            @Override
            public String asString() {
                return "redlease.election";
            }
        },

        /** The transition: {@code acquired} or {@code stepped-down}. */
        TRANSITION {
            @Override
            public String asString() {
                return "redlease.transition";
            }
        },

        /**
         * Why the term ended, a {@code StepDownReason} in lower case with dashes ({@code resigned},
         * {@code lost}, {@code expired}, ...); {@code none} for {@code acquired}.
         */
        REASON {
            @Override
            public String asString() {
                return "redlease.reason";
            }
        }
    }

    /** The keys whose values are unbounded: on the spans only. */
    public enum HighCardinalityKeyNames implements KeyName {

        /** The fencing token of the term won; absent for {@code stepped-down}. */
        TOKEN {
            @Override
            public String asString() {
                return "redlease.token";
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
