package io.redlease.boot.observation;

import io.micrometer.common.KeyValues;
import io.redlease.boot.observation.ElectionObservationDocumentation.HighCardinalityKeyNames;
import io.redlease.boot.observation.ElectionObservationDocumentation.LowCardinalityKeyNames;
import io.redlease.core.StepDownReason;
import java.util.Locale;

/**
 * The default convention of an election transition's observation: named {@value #NAME}, with the
 * contextual name {@code redlease acquired} or {@code redlease stepped-down}, and the keys of
 * {@link ElectionObservationDocumentation}.
 */
public class DefaultElectionObservationConvention implements ElectionObservationConvention {

    /** The name of the observation, and so of its timer. */
    public static final String NAME = "redlease.election.transition";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(ElectionObservationContext context) {
        return "redlease " + transition(context);
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(ElectionObservationContext context) {
        StepDownReason reason = context.getReason();
        return KeyValues.of(
                LowCardinalityKeyNames.ELECTION.withValue(context.getElection()),
                LowCardinalityKeyNames.TRANSITION.withValue(transition(context)),
                LowCardinalityKeyNames.REASON.withValue(
                        reason == null
                                ? DefaultLeaderOnlyObservationConvention.NONE
                                : reason.name().toLowerCase(Locale.ROOT).replace('_', '-')));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(ElectionObservationContext context) {
        KeyValues values = KeyValues.empty();
        String instance = context.getInstanceId();
        if (instance != null) {
            values = values.and(HighCardinalityKeyNames.INSTANCE.withValue(instance));
        }
        if (context.isAcquired()) {
            values =
                    values.and(
                            HighCardinalityKeyNames.TOKEN.withValue(
                                    Long.toString(context.getToken())));
        }
        return values;
    }

    private static String transition(ElectionObservationContext context) {
        return context.isAcquired() ? "acquired" : "stepped-down";
    }
}
