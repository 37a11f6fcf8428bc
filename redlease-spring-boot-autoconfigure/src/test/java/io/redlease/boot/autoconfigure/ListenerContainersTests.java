package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.jms.connection.CachingConnectionFactory;
import org.springframework.jms.listener.DefaultMessageListenerContainer;

/**
 * Which warm-up a leader-only listener container gets, by what the class path holds. spring-jms
 * does not bring the JMS API with it, so an application may hold the one without the other.
 */
class ListenerContainersTests {

    private static DefaultMessageListenerContainer jmsContainer() {
        DefaultMessageListenerContainer container = new DefaultMessageListenerContainer();
        container.setConnectionFactory(new CachingConnectionFactory());
        container.setDestinationName("orders");
        return container;
    }

    @Test
    void aJmsContainerIsWarmedUpWhenTheJmsApiIsPresent() {
        assertThat(ListenerContainers.warmUp(jmsContainer(), getClass().getClassLoader(), null))
                .isNotNull();
    }

    @Test
    void noJmsWarmUpIsConsideredWithoutTheJmsApi() {
        assertThat(
                        ListenerContainers.warmUp(
                                jmsContainer(), new FilteredClassLoader("jakarta.jms."), null))
                .isNull();
    }
}
