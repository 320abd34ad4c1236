package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(FlowKafkaExtension.class)
class TestNamesTest {
    private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

    private final TestNames fromConstructor;
    private TestNames fromField;

    TestNamesTest(TestNames fromConstructor) {
        this.fromConstructor = fromConstructor;
    }

    @Test
    void shouldDeriveNamesFromClassMethodSuffixAndCounter() {
        TestNames names = TestNames.of("ShouldCountIT", "shouldCount");

        assertThat(names.topic("input")).isEqualTo("ShouldCountIT-shouldCount-input-1");
        assertThat(names.topic("output")).isEqualTo("ShouldCountIT-shouldCount-output-2");
        assertThat(names.applicationId()).isEqualTo("ShouldCountIT-shouldCount-app-3");
    }

    @Test
    void shouldNeverRepeatANameAcrossInstancesOfTheSameTest() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            TestNames names = TestNames.of(TestNamesTest.class, "repeated");
            assertThat(seen.add(names.topic("input"))).isTrue();
            assertThat(seen.add(names.applicationId("input"))).isTrue();
        }
    }

    @Test
    void shouldReplaceCharactersKafkaRejects() {
        TestNames names = TestNames.of("My Test$1", "should[1] work ünïcode");

        String topic = names.topic("in/out");

        assertThat(topic).matches(LEGAL).startsWith("My_Test_1-should_1__work__n_code-in_out-");
    }

    @Test
    void shouldCapTheLengthAndKeepTheCounter() {
        TestNames names = TestNames.of("C", "m".repeat(300));

        String first = names.topic("input");
        String second = names.topic("input");

        assertThat(first).hasSize(TestNames.MAX_LENGTH).matches(LEGAL).endsWith("-1");
        assertThat(second).hasSize(TestNames.MAX_LENGTH).endsWith("-2").isNotEqualTo(first);
    }

    @Test
    void shouldNameTheClassOnlyWithoutAMethod() {
        assertThat(TestNames.of(TestNamesTest.class, null).prefix()).isEqualTo("TestNamesTest");
    }

    @Test
    void shouldRejectAnEmptyClassName() {
        assertThatThrownBy(() -> TestNames.of("", "m"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("className must not be empty");
    }

    @Test
    void shouldInjectTheSameNamesIntoConstructorFieldAndParameter(TestNames fromParameter) {
        assertThat(fromParameter.prefix())
                .isEqualTo("TestNamesTest-shouldInjectTheSameNamesIntoConstructorFieldAndParameter");
        assertThat(fromField).isSameAs(fromParameter);
        assertThat(fromConstructor).isSameAs(fromParameter);
    }
}
