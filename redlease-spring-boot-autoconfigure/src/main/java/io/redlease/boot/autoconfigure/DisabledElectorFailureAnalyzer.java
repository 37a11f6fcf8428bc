package io.redlease.boot.autoconfigure;

import io.redlease.core.Elector;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.analyzer.AbstractInjectionFailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Reports an injection point of type {@link Elector} that fails because {@code
 * redlease.enabled=false} leaves no electors, naming the switch and what to inject instead. Ordered
 * before Spring Boot's report of a missing bean, which would only say that none was found.
 */
class DisabledElectorFailureAnalyzer
        extends AbstractInjectionFailureAnalyzer<NoSuchBeanDefinitionException> implements Ordered {

    private final @Nullable Environment environment;

    DisabledElectorFailureAnalyzer(@Nullable Environment environment) {
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(
            Throwable rootFailure,
            NoSuchBeanDefinitionException cause,
            @Nullable String description) {
        Environment environment = this.environment;
        if (environment == null
                || environment.getProperty("redlease.enabled", Boolean.class, true)
                || cause.getResolvableType() == null
                || cause.getResolvableType().resolve() != Elector.class) {
            return null;
        }
        return new FailureAnalysis(
                (description != null ? description : "A component")
                        + " required an io.redlease.core.Elector, but leader election is disabled"
                        + " (redlease.enabled=false), so there are no electors.",
                "Inject io.redlease.core.LeadershipContext instead: while redlease is disabled it"
                        + " answers that this instance does not lead, and its requireFencer()"
                        + " fails naming redlease.enabled=false. Or inject ObjectProvider<Elector>"
                        + " where the code can do without an elector, or remove"
                        + " redlease.enabled=false.",
                cause);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
