package io.redlease.samples.jms;

import jakarta.jms.ConnectionFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.jms.ConnectionFactoryUnwrapper;
import org.springframework.boot.jms.autoconfigure.DefaultJmsListenerContainerFactoryConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jms.config.DefaultJmsListenerContainerFactory;
import org.springframework.jms.connection.SingleConnectionFactory;

/**
 * Spring Boot's listener container factory, configured by its {@code spring.jms.listener.*}
 * properties, whose containers share one broker connection that outlives their stops: a {@link
 * SingleConnectionFactory} over the broker's factory. Spring's container opens a connection at each
 * start and closes it at each stop; through this factory the connection stays open, so the
 * connection redlease opens on a follower at startup (warm standby) is the one its container uses
 * when elected, and a successor's container starts without a connection handshake.
 */
@Configuration(proxyBeanMethods = false)
class ListenerConnections implements DisposableBean {

    private @Nullable SingleConnectionFactory connections;

    // tag::listener-connections[]
    @Bean
    DefaultJmsListenerContainerFactory jmsListenerContainerFactory(
            DefaultJmsListenerContainerFactoryConfigurer configurer,
            ConnectionFactory connectionFactory) {
        SingleConnectionFactory shared =
                new SingleConnectionFactory(ConnectionFactoryUnwrapper.unwrap(connectionFactory));
        shared.setReconnectOnException(true); // a new connection after a failure
        this.connections = shared;
        DefaultJmsListenerContainerFactory factory = new DefaultJmsListenerContainerFactory();
        configurer.configure(factory, shared);
        return factory;
    }

    // end::listener-connections[]

    @Override
    public void destroy() {
        if (connections != null) {
            connections.destroy();
        }
    }
}
