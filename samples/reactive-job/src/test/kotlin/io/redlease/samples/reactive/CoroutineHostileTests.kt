package io.redlease.samples.reactive

import io.redlease.boot.test.RedleaseTester
import io.redlease.boot.test.TestRedis
import io.redlease.core.LeadershipContext
import io.redlease.core.Term
import io.redlease.core.annotation.LeaderOnly
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
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
import org.springframework.core.PropagationContextElement
import org.springframework.data.redis.core.StringRedisTemplate
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource

/**
 * Hostile probes of `@LeaderOnly` coroutines and flows: the term in thread locals of every
 * continuation (the sample runs with `spring.reactor.context-propagation=auto`), work that runs on
 * after its term while this same instance is elected again, and structured concurrency at the end
 * of the term.
 */
@SpringBootTest(properties = ["redlease.ttl=1s", "redlease.instance-id=coroutines-hostile", "sample.slot-report.cron=-"])
@TestRedis
class CoroutineHostileTests {

    companion object {
        private val NAME = "{coroutines-hostile-" + System.nanoTime() + "}"

        /**
         * The bound of a wait for an event that follows from the test's own steps: only a defect
         * reaches it, never a slow machine.
         */
        private const val SLOW_MACHINE = 60_000L

        @JvmStatic
        @DynamicPropertySource
        fun election(registry: DynamicPropertyRegistry) {
            registry.add("redlease.name") { NAME }
        }
    }

    open class HostileWork(private val leadership: LeadershipContext) {

        val calls = AtomicInteger()

        val ended = ConcurrentLinkedQueue<String>()

        private fun seen(): Long = leadership.boundTerm().map(Term::token).orElse(-1L)

        /** The token in thread locals, on the collecting thread and after a hop to IO. */
        @LeaderOnly
        open fun seenInFlow(): Flow<Long> = flow {
            calls.incrementAndGet()
            emit(seen())
            emit(withContext(Dispatchers.IO) { seen() })
        }

        /** The token in thread locals after withContext and in a child coroutine. */
        @LeaderOnly
        open suspend fun seenInSuspend(): List<Long> {
            val direct = seen()
            val io = withContext(Dispatchers.IO) { seen() }
            val child = coroutineScope { async(Dispatchers.Default) { seen() }.await() }
            return listOf(direct, io, child)
        }

        /**
         * Runs on after its term, then writes through the fencer it finds, on IO; says when its
         * body has started (so it was subscribed to in the term it started in).
         */
        @LeaderOnly(interruptOnStepDown = false)
        open fun staleFlow(
            started: CompletableDeferred<Unit>,
            go: CompletableDeferred<Unit>,
            key: String,
        ): Flow<Pair<Long, Boolean>> =
            flow {
                started.complete(Unit)
                go.await()
                val fencer = leadership.fencer().orElseThrow()
                emit(fencer.token() to fencer.set(key, "late"))
            }.flowOn(Dispatchers.IO)

        /** The same in a suspend function. */
        @LeaderOnly(interruptOnStepDown = false)
        open suspend fun staleSuspend(
            started: CompletableDeferred<Unit>,
            go: CompletableDeferred<Unit>,
            key: String,
        ): Pair<Long, Boolean> {
            started.complete(Unit)
            go.await()
            return withContext(Dispatchers.IO) {
                val fencer = leadership.fencer().orElseThrow()
                fencer.token() to fencer.set(key, "late")
            }
        }

        /** Launches a child that would run forever; the end of the term must cancel it too. */
        @LeaderOnly
        open suspend fun withChild(started: CompletableDeferred<Unit>) {
            coroutineScope {
                launch(Dispatchers.IO) {
                    try {
                        started.complete(Unit)
                        awaitCancellation()
                    } finally {
                        ended.add("child")
                    }
                }
            }
        }

        open fun calls(): Int = calls.get()

        open fun ended(): List<String> = ended.toList()
    }

    @TestConfiguration(proxyBeanMethods = false)
    class Work {
        @Bean
        fun hostileWork(leadership: LeadershipContext) = HostileWork(leadership)
    }

    @Autowired
    private lateinit var work: HostileWork

    @Autowired
    private lateinit var tester: RedleaseTester

    @Autowired
    private lateinit var redis: StringRedisTemplate

    /** Resigns and waits until this instance leads again, in a newer term. */
    private fun electedAgain(old: Term): Term {
        tester.stepDown()
        return await().atMost(Duration.ofMillis(SLOW_MACHINE)).until(
            { tester.elector().term().filter { it.isActive && it.token() > old.token() } },
            { it.isPresent },
        ).orElseThrow()
    }

    @Test
    fun `a flow's body sees its term in thread locals, collected twice`() {
        val term = tester.awaitLeadership()
        val before = work.calls()
        repeat(2) {
            assertThat(runBlocking { work.seenInFlow().toList() })
                .`as`("tokens the flow's body saw in thread locals (collecting thread, then IO)")
                .containsExactly(term.token(), term.token())
        }
        assertThat(work.calls()).isEqualTo(before + 2)
    }

    @Test
    fun `a suspend function sees its term in thread locals after withContext and in a child`() {
        val term = tester.awaitLeadership()
        assertThat(runBlocking { work.seenInSuspend() })
            .containsExactly(term.token(), term.token(), term.token())
    }

    @Test
    fun `a suspend function called from a coroutine that propagates context sees its term in thread locals`() {
        val term = tester.awaitLeadership()
        // As a WebFlux handler or a reactive @Scheduled method calls it: Spring adds this element
        // to the caller's coroutine under automatic propagation.
        assertThat(runBlocking(PropagationContextElement()) { work.seenInSuspend() })
            .containsExactly(term.token(), term.token(), term.token())
    }

    @Test
    fun `a flow that runs on after its term never writes with the newer term's token`() {
        val first = tester.awaitLeadership()
        val key = NAME + ":stale-flow"
        val started = CompletableDeferred<Unit>()
        val go = CompletableDeferred<Unit>()
        val result = CompletableDeferred<Pair<Long, Boolean>>()
        val collecting = Thread {
            runBlocking {
                try {
                    work.staleFlow(started, go, key).collect { result.complete(it) }
                } catch (failure: Throwable) {
                    result.completeExceptionally(failure)
                }
            }
        }
        collecting.start()
        // The flow's body runs, so it was subscribed to in the first term; it waits for go.
        runBlocking { withTimeout(SLOW_MACHINE) { started.await() } }
        val second = electedAgain(first)
        go.complete(Unit)
        val outcome = runBlocking { withTimeout(SLOW_MACHINE) { runCatching { result.await() } } }
        // Refused by the fence, or failed for want of a term: either way nothing was written.
        assertThat(redis.hasKey(key))
            .`as`(
                "the flow of term %d ended with %s while term %d leads",
                first.token(), outcome, second.token(),
            )
            .isFalse()
        collecting.join()
    }

    @Test
    fun `a suspend function that runs on after its term never writes with the newer term's token`() {
        val first = tester.awaitLeadership()
        val key = NAME + ":stale-suspend"
        val started = CompletableDeferred<Unit>()
        val go = CompletableDeferred<Unit>()
        val result = CompletableDeferred<Pair<Long, Boolean>>()
        val calling = Thread {
            runBlocking {
                try {
                    result.complete(work.staleSuspend(started, go, key))
                } catch (failure: Throwable) {
                    result.completeExceptionally(failure)
                }
            }
        }
        calling.start()
        // The call runs, so it was made in the first term; it waits for go.
        runBlocking { withTimeout(SLOW_MACHINE) { started.await() } }
        val second = electedAgain(first)
        go.complete(Unit)
        val outcome = runBlocking { withTimeout(SLOW_MACHINE) { runCatching { result.await() } } }
        assertThat(redis.hasKey(key))
            .`as`(
                "the coroutine of term %d ended with %s while term %d leads",
                first.token(), outcome, second.token(),
            )
            .isFalse()
        calling.join()
    }

    @Test
    fun `the end of the term cancels the children of the coroutine`() {
        tester.awaitLeadership()
        val started = CompletableDeferred<Unit>()
        val failure = runBlocking {
            val running = async { runCatching { work.withChild(started) } }
            withTimeout(SLOW_MACHINE) { started.await() }
            tester.stepDown()
            withTimeout(SLOW_MACHINE) { running.await() }.exceptionOrNull()
        }
        assertThat(failure).isNotNull()
        await().atMost(Duration.ofMillis(SLOW_MACHINE)).until { work.ended().contains("child") }
    }
}
