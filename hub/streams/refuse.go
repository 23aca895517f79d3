package streams

import (
	"fmt"
	"strings"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
)

// MaxBufferSize is the largest telemetry buffer_size: a websocket
// subscriber further behind than the sink's limit (100,000 messages by
// default) for 30 s is closed as a slow consumer, so a lag notice past it
// would come too late.
const MaxBufferSize = 100_000

// refused notes in p what a start or configure body may not ask for
// although a stream stored with it loads: settings the hub does not
// carry out (refused by name rather than accepted without effect) and
// combinations that cannot work. A stored stream is not judged again
// when it loads (Compile), so one saved before a refusal keeps running
// with the setting ignored.
func refused(p *problems, kind string, c *Config) {
	refusedEphemeral(p, c)
	switch kind {
	case hub.KindTelemetry:
		if c.Telemetry != nil {
			refusedTelemetry(p, c.Telemetry)
			if f := c.Telemetry.Filters; f != nil {
				emptyIn(p, "filters.custom_conditions", f.CustomConditions)
			}
		}
	case hub.KindEvents:
		if c.Events != nil {
			refusedEvents(p, c.Events)
			if f := c.Events.EventFilters; f != nil {
				emptyIn(p, "event_filters.custom_conditions", f.CustomConditions)
			}
		}
	}
}

// emptyIn refuses an in condition over no value: it matches no message,
// so the stream would receive nothing (an empty list filter of the
// stream's own, vehicles or event_filters.categories, filters nothing
// instead; a custom condition's list is the values a field may hold).
func emptyIn(p *problems, path string, cs []expr.Condition) {
	for i, c := range cs {
		if v, ok := c.Value.([]any); ok && c.Operator == "in" && len(v) == 0 {
			p.add(&FieldError{fmt.Sprintf("%s[%d].value", path, i), "in needs at least one value: over none the condition matches no message, and the stream would receive nothing"})
		}
	}
}

// fleetRule is the rule of fleet_id.
const fleetRule = "must be a non-empty id of at most 200 characters"

// errWebhookCompression refuses stream_config.compression on a webhook
// stream: requests are sent as they are, without Content-Encoding.
func errWebhookCompression() *FieldError {
	return &FieldError{"stream_config.compression", "applies to websocket delivery only (permessage-deflate); " +
		"webhook requests are sent uncompressed. Omit it or send false"}
}

func refusedEvents(p *problems, e *EventsConfig) {
	if f := e.FleetID; f != nil && (strings.TrimSpace(*f) == "" || len(*f) > 200) {
		p.add(&FieldError{"fleet_id", fleetRule})
	}
	sc := e.StreamConfig
	if sc == nil {
		return
	}
	batchRanges(p, "stream_config.", sc.BatchSize, sc.MaxWaitTime)
	if sc.DeliveryMethod != "webhook" {
		return
	}
	if sc.Compression {
		p.add(errWebhookCompression())
	}
	if sc.Reliability == "at_most_once" {
		p.add(&FieldError{"stream_config.reliability", "at_most_once applies to websocket delivery only: webhook deliveries are retried until " +
			"acknowledged (at least once). Omit it or send at_least_once"})
	}
}

// batchRanges checks a batch size and wait (in milliseconds) when sent,
// whether or not batching is on; the fields are named after prefix.
func batchRanges(p *problems, prefix string, size, waitMS *int) {
	if size != nil && (*size < 1 || *size > MaxBatchSize) {
		p.add(&FieldError{prefix + "batch_size", batchSizeRule})
	}
	if waitMS != nil && (*waitMS < 1 || *waitMS > MaxWaitMS) {
		p.add(&FieldError{prefix + "max_wait_time", maxWaitRule})
	}
}

// webhookByURL reads a webhook_url sent without a delivery method as
// webhook delivery: the interface addresses a webhook through
// webhook_url. An explicit delivery_method websocket beside it is still
// refused (checkWebhook).
func (c *Config) webhookByURL() {
	if t := c.Telemetry; t != nil && t.WebhookURL != "" && t.DeliveryMethod == "" {
		t.DeliveryMethod = "webhook"
	}
	if e := c.Events; e != nil && e.WebhookURL != "" {
		if e.StreamConfig == nil {
			e.StreamConfig = &EventStreamConfig{}
		}
		if e.StreamConfig.DeliveryMethod == "" {
			e.StreamConfig.DeliveryMethod = "webhook"
		}
	}
}

func refusedTelemetry(p *problems, t *TelemetryConfig) {
	sc := t.StreamConfig
	if sc == nil {
		return
	}
	if b := sc.BufferSize; b != nil && (*b < 1 || *b > MaxBufferSize) {
		p.add(&FieldError{"stream_config.buffer_size", fmt.Sprintf("must be between 1 and %d messages", MaxBufferSize)})
	}
	if sc.BufferSize != nil && t.DeliveryMethod == "webhook" {
		p.add(&FieldError{"stream_config.buffer_size", "applies to websocket subscribers only (the messages one may fall behind before a lag notice); " +
			"a webhook stream's deliveries wait in a durable queue"})
	}
	if sc.CustomInterval != nil && sc.Frequency != "custom" {
		p.add(&FieldError{"stream_config.custom_interval", "applies to frequency custom only: send frequency custom with it"})
	}
	if b := sc.BatchProcessing; b != nil {
		batchRanges(p, "stream_config.batch_processing.", b.BatchSize, b.MaxWaitTime)
	}
	if sc.Compression && t.DeliveryMethod == "webhook" {
		p.add(errWebhookCompression())
	}
	if q := sc.QualitySettings; q != nil && q.IncludeRawData {
		p.add(&FieldError{"stream_config.quality_settings.include_raw_data", "true is not supported: telemetry messages carry decoded readings only, " +
			"there is no raw sensor data to include. Omit it or send false"})
	}
	a := sc.AlertIntegration
	if a == nil {
		return
	}
	if a.PredictiveWarnings {
		p.add(&FieldError{"stream_config.alert_integration.predictive_warnings", "true is not implemented: the hub makes no predictions. Omit it or send false"})
	}
	if f := t.Filters; (a.RealTimeAlerts || a.ThresholdMonitoring) && len(thresholds(f)) == 0 {
		field := "stream_config.alert_integration.real_time_alerts"
		if a.ThresholdMonitoring {
			field = "stream_config.alert_integration.threshold_monitoring"
		}
		p.add(&FieldError{field, "needs a threshold to watch: filters.alert_thresholds, filters.min_engine_temp or filters.max_fuel_level"})
	}
}

// refusedEphemeral checks ephemeral and idle_timeout_seconds: a webhook
// stream has no clients to be idle of.
func refusedEphemeral(p *problems, c *Config) {
	var on, webhook bool
	var secs int
	switch {
	case c.Telemetry != nil:
		on, secs, webhook = c.Telemetry.Ephemeral, c.Telemetry.IdleTimeoutSeconds, c.Telemetry.DeliveryMethod == "webhook"
	case c.Events != nil:
		on, secs = c.Events.Ephemeral, c.Events.IdleTimeoutSeconds
		webhook = c.Events.StreamConfig != nil && c.Events.StreamConfig.DeliveryMethod == "webhook"
	default:
		return
	}
	if on && webhook {
		p.add(&FieldError{"ephemeral", "applies to websocket delivery only: an ephemeral stream ends when no client is connected, and webhook delivery has none"})
	}
	if secs != 0 && !on {
		p.add(&FieldError{"idle_timeout_seconds", "applies to ephemeral streams only: send ephemeral true with it"})
	}
	if min, max := int(MinIdleTimeout/time.Second), int(MaxIdleTimeout/time.Second); secs != 0 && (secs < min || secs > max) {
		p.add(&FieldError{"idle_timeout_seconds", fmt.Sprintf("must be between %d and %d seconds (default %d)", min, max, int(DefaultIdleTimeout/time.Second))})
	}
}
