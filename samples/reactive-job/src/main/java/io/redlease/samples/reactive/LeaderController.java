package io.redlease.samples.reactive;

import io.redlease.core.NotLeaderException;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** {@code GET /token}: the leader's term token; a follower answers 409 Conflict. */
@RestController
public class LeaderController {

    private final LeaderWork work;

    public LeaderController(LeaderWork work) {
        this.work = work;
    }

    @GetMapping("/token")
    public Mono<String> token() {
        return work.token().map(token -> "token " + token);
    }

    @ExceptionHandler(NotLeaderException.class)
    @ResponseStatus(HttpStatus.CONFLICT)
    public String notLeader(NotLeaderException ex) {
        return ex.getMessage();
    }
}
