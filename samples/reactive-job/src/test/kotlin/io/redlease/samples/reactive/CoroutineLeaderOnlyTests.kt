package io.redlease.samples.reactive

import io.redlease.boot.test.RedleaseTester
import io.redlease.boot.test.TestRedis
import io.redlease.core.LeadershipContext
import io.redlease.core.Term
import io.redlease.core.TermEndedException
import io.redlease.core.annotation.LeaderOnly
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.test.context.TestConfiguration
import org.springframework.context.annotation.Bean
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource

/**
 * `@LeaderOnly` on Kotlin `suspend` functions and flows: checked when called (a suspend function)
 * or collected (a flow), the term in every continuation, the coroutine cancelled when the term
 * ends.
 */
@SpringBootTest(properties = ["redlease.ttl=1s", "redlease.instance-id=coroutines-test", "sample.slot-report.cron=-"])
@TestRedis
class CoroutineLeaderOnlyTests {

    companion object {
        private val NAME = "{coroutines-test-" + System.nanoTime() + "}"

        @JvmStatic
        @DynamicPropertySource
        fun election(registry: DynamicPropertyRegistry) {
            registry.add("redlease.name") { NAME }
        }
    }

    open class CoroutineWork(private val leadership: LeadershipContext) {

        val calls = AtomicInteger()

        val ended = ConcurrentLinkedQueue<String>()

        /** The token of the term, as the continuation after a hop to another thread sees it. */
        @LeaderOnly
        open suspend fun token(): Long? {
            calls.incrementAndGet()
            delay(10)
            return withContext(Dispatchers.Default) {
                leadership.reactiveTerm().awaitSingle().token()
            }
        }

        /** Runs until its term ends. */
        @LeaderOnly
        open suspend fun forever(): String {
            try {
                awaitCancellation()
            } finally {
                ended.add("forever")
            }
        }

        @LeaderOnly
        open fun ticks(): Flow<Long> = flow {
            calls.incrementAndGet()
            for (i in 1..3) {
                emit(leadership.reactiveTerm().awaitSingle().token())
            }
        }

        open fun calls(): Int = calls.get()

        open fun ended(): List<String> = ended.toList()
    }

    @TestConfiguration(proxyBeanMethods = false)
    class Work {
        @Bean
        fun coroutineWork(leadership: LeadershipContext) = CoroutineWork(leadership)
    }

    @Autowired
    private lateinit var work: CoroutineWork

    @Autowired
    private lateinit var tester: RedleaseTester

    @Test
    fun `a leader's suspend function sees its term after it resumes on another thread`() {
        val term: Term = tester.awaitLeadership()
        assertThat(runBlocking { work.token() }).isEqualTo(term.token())
    }

    @Test
    fun `a follower's suspend function and flow never run`() {
        tester.awaitLeadership()
        tester.stealLease(Duration.ofSeconds(30)).use {
            tester.awaitFollower()
            val before = work.calls()
            assertThat(runBlocking { work.token() }).isNull()
            assertThat(runBlocking { work.ticks().toList() }).isEmpty()
            assertThat(work.calls()).isEqualTo(before)
        }
    }

    @Test
    fun `a leader's flow emits with its term`() {
        val term = tester.awaitLeadership()
        assertThat(runBlocking { work.ticks().toList() }).containsExactly(term.token(), term.token(), term.token())
    }

    @Test
    fun `the end of the term cancels the coroutine`() {
        tester.awaitLeadership()
        val failure = runBlocking {
            val running = async { runCatching { work.forever() } }
            delay(200)
            tester.stepDown()
            withTimeout(5_000) { running.await() }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(TermEndedException::class.java)
        await().atMost(Duration.ofSeconds(5)).until { work.ended().contains("forever") }
    }
}
