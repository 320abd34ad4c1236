package io.flowkafka.internal.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.spec.StreamSpec;
import io.flowkafka.spi.SourceProvider;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** Source classes come from the SourceProvider SPI; core registers KafkaSource like any other provider. */
class SourcesTest {
    @Test
    void shouldFindCoresKafkaSourceThroughTheServiceLoader() {
        assertThat(Sources.provider("KafkaSource")).isInstanceOf(KafkaSourceProvider.class);
        assertThat(Sources.knownSourceClassNames()).contains("KafkaSource");
        assertThat(Sources.provider("KafkaSorce")).isNull();
    }

    @Test
    void shouldRejectAKeyedReadOfASourceWhoseProviderDoesNotSupportIt() {
        SourceProvider files = new SourceProvider() {
            @Override
            public Set<String> sourceClassNames() {
                return Set.of("FileSource");
            }

            @Override
            public Set<String> parameterNames(SourceSpec source) {
                return Set.of("path");
            }

            @Override
            public List<Problem> validate(ComputationSpec computation, SourceSpec source, @Nullable StreamSpec stream) {
                return List.of();
            }
        };
        ComputationSpec count = ComputationSpec.builder("count").source("events", "FileSource", Map.of("path", "/x"))
                .build();

        List<SourceProvider.Problem> problems = files.validateKeyedRead(count, count.sourceStreams().get(0));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(SpecProblem.Severity.ERROR);
            assertThat(p.field()).isEqualTo("source_class_name");
            assertThat(p.message()).contains("reads FileSource source 'events' directly");
            assertThat(p.fix()).contains("read the source in a Source computation");
        });
    }
}
