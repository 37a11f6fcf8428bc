package io.redlease.boot.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.redlease.boot.observation.LeaderOnlyObservationDocumentation.HighCardinalityKeyNames;
import io.redlease.boot.observation.LeaderOnlyObservationDocumentation.LowCardinalityKeyNames;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnlyRun;

/**
 * The default convention of a leader-only run's observation: named {@value #NAME}, with the
 * contextual name {@code leader-only SimpleClassName.method}, and the keys of {@link
 * LeaderOnlyObservationDocumentation}.
 */
public class DefaultLeaderOnlyObservationConvention implements LeaderOnlyObservationConvention {

    /** The name of the observation, and so of its timer. */
    public static final String NAME = "redlease.leaderonly.run";

    /** The value of a key that does not apply. */
    static final String NONE = "none";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(LeaderOnlyObservationContext context) {
        return "leader-only " + context.getRun().method().name();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(LeaderOnlyObservationContext context) {
        LeaderOnlyRun run = context.getRun();
        Integer partition = run.partition();
        LeaderOnlyRun.Outcome outcome = run.outcome();
        return KeyValues.of(
                LowCardinalityKeyNames.ELECTION.withValue(run.election()),
                LowCardinalityKeyNames.PARTITION.withValue(
                        partition != null ? partition.toString() : NONE),
                LowCardinalityKeyNames.METHOD.withValue(run.method().name()),
                LowCardinalityKeyNames.OUTCOME.withValue(
                        outcome != null ? outcome.value() : "unknown"));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(LeaderOnlyObservationContext context) {
        LeaderOnlyRun run = context.getRun();
        KeyValues values =
                KeyValues.of(HighCardinalityKeyNames.INSTANCE.withValue(run.instanceId()));
        if (run.token() != 0) {
            values =
                    values.and(
                            KeyValue.of(
                                    HighCardinalityKeyNames.TOKEN.asString(),
                                    Long.toString(run.token())));
        }
        Slot slot = run.slot();
        if (slot != null) {
            values = values.and(HighCardinalityKeyNames.SLOT.withValue(slot.time().toString()));
        }
        return values;
    }
}
