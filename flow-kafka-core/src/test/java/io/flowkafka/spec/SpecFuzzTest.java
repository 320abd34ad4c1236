package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.spec.SpecMutator.Base;
import io.flowkafka.spec.SpecMutator.Kind;
import io.flowkafka.spec.SpecMutator.Mutation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Issue 28.4: fuzzed specs. Mutates valid JSON and YAML specs ({@link SpecMutator}: wrong types, unknown ids,
 * cycles, duplicate writers, bad durations, out-of-range numbers, missing required fields, repeated keys,
 * truncations, random structural changes) until {@value #DEFAULT_SPECS} of them were rejected, and checks each:
 * <ol>
 *   <li>loading and validating it throws {@link InvalidSpecException} and nothing else, within a bound;</li>
 *   <li>the message names the computation and the field the mutation touched (for a mutation that has one);</li>
 *   <li>a mutation that leaves the spec valid (only random structural ones may) really is valid: it compiles;
 *       such specs are counted apart, not as rejections.</li>
 * </ol>
 * The seed is printed. Rerun it with {@code -Dflow.fuzz.seed=<seed>} and, for one case,
 * {@code -Dflow.fuzz.case=<n>}; {@code -Dflow.fuzz.specs=<count>} changes how many rejections to reach.
 */
class SpecFuzzTest {
    static final int DEFAULT_SPECS = 1000;
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final List<String> BASES = List.of("specs/activity-pipeline.json", "specs/fuzz/wait-click.yaml",
            "specs/fuzz/page-sessions.yaml");

    /** What loading one mutated spec did. */
    enum Outcome { REJECTED, VALID }

    @Test
    void shouldAcceptEveryBaseSpec() {
        for (String resource : BASES) {
            Base base = Base.resource(resource);
            PipelineSpec spec = load(base.text(), base.yaml()).validated();
            PipelineCompiler.compile(spec, "p-", false);
        }
    }

    @Test
    void shouldRejectEveryFuzzedSpecWithAnInvalidSpecExceptionNamingComputationAndField() {
        long seed = Long.getLong("flow.fuzz.seed", new Random().nextLong());
        int wanted = Integer.getInteger("flow.fuzz.specs", DEFAULT_SPECS);
        Integer only = Integer.getInteger("flow.fuzz.case");
        System.out.println("SpecFuzzTest seed " + seed + " (rerun: -Dflow.fuzz.seed=" + seed + ")");
        List<Base> bases = BASES.stream().map(Base::resource).toList();
        Map<Kind, int[]> counts = new EnumMap<>(Kind.class); // kind -> {rejected, valid}
        List<String> failures = new ArrayList<>();
        int rejected = 0;
        int n = only != null ? only : 0;
        for (; rejected < wanted && n < wanted * 3; n++) {
            Random random = new Random(seed * 31 + n);
            Kind kind = Kind.values()[n % Kind.values().length];
            Base base = bases.get(random.nextInt(bases.size()));
            Mutation m = SpecMutator.mutate(base, kind, random);
            if (m != null) {
                try {
                    Outcome outcome = check(m);
                    counts.computeIfAbsent(kind, k -> new int[2])[outcome.ordinal()]++;
                    rejected += outcome == Outcome.REJECTED ? 1 : 0;
                } catch (AssertionError | RuntimeException e) {
                    failures.add("case " + n + " (-Dflow.fuzz.seed=" + seed + " -Dflow.fuzz.case=" + n + "): " + m
                            + "\n  " + e.toString().replace("\n", "\n  ") + "\n  spec: " + m.text().replace("\n", "\n  "));
                }
            }
            if (only != null) {
                break;
            }
        }
        String table = counts.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()[0] + " rejected, "
                + e.getValue()[1] + " valid").collect(Collectors.joining("\n  "));
        System.out.println("SpecFuzzTest seed " + seed + ": " + (only != null ? "case " + only : n + " cases") + ", "
                + rejected + " rejected, "
                + failures.size() + " failed\n  " + table);
        assertThat(failures).as("seed %d", seed).isEmpty();
        if (only == null) {
            assertThat(rejected).as("seed %d", seed).isGreaterThanOrEqualTo(wanted);
            for (Kind kind : Kind.values()) {
                assertThat(counts.getOrDefault(kind, new int[2])[0]).as("%s rejected, seed %d", kind, seed).isPositive();
            }
        }
    }

    /** Loads, validates and, if valid, compiles the mutated spec; fails on anything but a good rejection. */
    static Outcome check(Mutation m) {
        Throwable thrown = assertTimeoutPreemptively(BOUND, () -> {
            try {
                PipelineSpec spec = load(m.text(), m.yaml()).validated();
                PipelineCompiler.compile(spec, "p-", false); // a spec the validator accepts must compile
                return null;
            } catch (InvalidSpecException e) {
                return e;
            }
        }, () -> "loading took over " + BOUND + ": " + m);
        if (thrown == null) {
            assertThat(m.mustBeInvalid()).as("the spec was accepted, but a %s mutation must be rejected", m.kind())
                    .isFalse();
            return Outcome.VALID;
        }
        InvalidSpecException e = (InvalidSpecException) thrown;
        assertThat(e.problems()).isNotEmpty().allSatisfy(p -> {
            assertThat(p.field()).isNotBlank();
            assertThat(p.message()).isNotBlank();
            assertThat(p.fix()).isNotBlank();
        });
        if (!m.mustContain().isEmpty()) {
            assertThat(e.getMessage()).contains(m.mustContain());
        }
        if (!m.anyOf().isEmpty()) {
            assertThat(e.getMessage()).containsAnyOf(m.anyOf().toArray(String[]::new));
        }
        return Outcome.REJECTED;
    }

    static PipelineSpec load(String text, boolean yaml) {
        return yaml ? PipelineSpecLoader.fromYaml(text) : PipelineSpecLoader.fromJson(text);
    }
}
