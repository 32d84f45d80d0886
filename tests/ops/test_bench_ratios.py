"""The benchmark's ratios and table (bench/ratios.py, bench/report.py), from a
results.json-shaped dict: no database, no benchmark run."""

from __future__ import annotations

from bench import ratios, report

RUN = "run-a"


def _results(**overrides) -> dict:
    results = {
        "run_id": RUN,
        "bulk_register": {"run_id": RUN, "links_per_s": 6000, "copy": {"links_per_s": 9000},
                          "concurrent": {"writers": 2, "per_s": 7000}},
        "fanout": {"run_id": RUN, "links_per_s": 4500, "register_links_per_s": 6000,
                   "source": {"links_per_s": 5000}},
        "wsp_import": {"run_id": RUN, "observations_per_s": 2000, "batch_size": 100,
                       "copy": {"observations_per_s": 5000}},
        "http_register": {"run_id": RUN, "register": {"req_per_s": 400.0, "p99_ms": 80.5},
                          "bare_insert_floor": {"req_per_s": 700.0},
                          "naive_peer": {"req_per_s": 320.0}},
        "reads_at_scale": {"run_id": RUN, "links": 1_000_000, "list_p50_ms": 24.0,
                           "raw_p50_ms": 6.0, "list_queries": 6,
                           "scales": {"100000": {"list_p50_ms": 22.0, "orderings": {
                                          o: {"p50_ms": 22.0} for o in ratios.ORDERINGS}},
                                      "10000": {"list_p50_ms": 20.0, "orderings": {
                                          o: {"p50_ms": 20.0} for o in ratios.ORDERINGS}},
                                      "1000000": {"list_p50_ms": 24.0, "orderings": {
                                          o: {"p50_ms": 24.0} for o in ratios.ORDERINGS}}},
                           "revisions": {"1": {"p50_ms": 10.0}, "100": {"p50_ms": 11.0},
                                         "1000": {"p50_ms": 16.0}}},
        "transparency": {"run_id": RUN,
                         "bulk": {"on_links_per_s": 5000, "off_links_per_s": 5500},
                         "http": {"on": {"req_per_s": 360.0}, "off": {"req_per_s": 400.0}},
                         "verify": {"verify_leaves_per_s": 20000,
                                    "must_do_leaves_per_s": 80000,
                                    "verify_tree_only_leaves_per_s": 30000,
                                    "tree_hashing_leaves_per_s": 45000},
                         "checkpoint_lag": {"p99_ms": 420.0},
                         "proofs": {"1000000": {"p50_ms": 3.3}, "10000": {"p50_ms": 3.0},
                                    "100000": {"p50_ms": 3.1}}},
        "memory": {"run_id": RUN, "bulk_register": {"links": 1000, "peak_rss_mb": 120.5},
                   "wsp_import": {"documents": 100, "peak_rss_mb": 310.0}},
        "log_pace": {"run_id": RUN, "written_per_s": 3000, "integrated_per_s": 2850,
                     "links": 100_000, "transport": "HTTP",
                     "checkpoint_lag": {"p99_ms": 640.0}},
        "event_feed": {"run_id": RUN, "outbox": {"with_outbox": {"per_s": 400.0},
                                                 "without_outbox": {"per_s": 420.0}}},
    }  # fmt: skip
    # An ordering that sorts the whole Dimension: a middle page 3 times slower at 1M.
    results["reads_at_scale"]["scales"]["1000000"]["orderings"]["revision"]["p50_ms"] = 60.0
    results.update(overrides)
    return results


def test_each_ratio_divides_its_two_figures_of_the_same_run():
    got = ratios.compute(_results())
    assert {k: v["ratio"] for k, v in got.items()} == {
        "copy_over_bulk": 1.5,  # 9000 / 6000
        "copy_over_wsp": 2.5,  # 5000 / 2000
        "floor_over_register": 1.75,  # 700 / 400
        "register_over_naive_peer": 1.25,  # 400 / 320
        "list_over_raw": 4.0,  # 24 / 6
        "fanout_over_bulk": 0.75,  # 4500 / 6000
        "outbox_over_register": 1.05,  # 420 / 400
        "list_scaling": 1.2,  # 24 / 20
        "ordering_scaling[-grounding_id]": 1.2,
        "ordering_scaling[grounding_id]": 1.2,
        "ordering_scaling[-observed_at]": 1.2,
        "ordering_scaling[observed_at]": 1.2,
        "ordering_scaling[-revision]": 1.2,
        "ordering_scaling[revision]": 3.0,  # 60 / 20
        "revisions_scaling": 1.6,  # 16 / 10
        "log_bulk": 1.1,  # 5500 / 5000
        "log_register": 1.11,  # 400 / 360
        "log_verify": 4.0,  # 80000 / 20000
        "log_verify_tree": 1.5,  # 45000 / 30000
        "log_keeps_up": 0.95,  # 2850 / 3000
        "inclusion_proof_scaling": 1.1,  # 3.3 / 3.0
        "pdf_over_library": None,  # the pdf_import step did not run
    }
    assert {k: v["met"] for k, v in got.items()} == {
        "copy_over_bulk": True,
        "copy_over_wsp": False,
        "floor_over_register": True,
        "register_over_naive_peer": True,
        "list_over_raw": False,
        "fanout_over_bulk": False,
        "outbox_over_register": True,
        "list_scaling": True,
        **{f"ordering_scaling[{o}]": o != "revision" for o in ratios.ORDERINGS},
        "revisions_scaling": False,
        "log_bulk": True,
        "log_register": True,
        "log_verify": False,
        "log_verify_tree": True,
        "log_keeps_up": True,
        "inclusion_proof_scaling": True,
        "pdf_over_library": None,
    }
    # A figure without rounds is one round.
    assert got["copy_over_bulk"] == {
        "ratio": 1.5, "min": 1.5, "max": 1.5, "rounds": 1, "registry": 6000, "limit": 9000,
        "unit": "links/s", "target": "≤ 2.0", "met": True,
    }  # fmt: skip
    # Smallest size first, whatever the order in results.json.
    assert got["list_scaling"]["p50_ms"] == {"10000": 20.0, "100000": 22.0, "1000000": 24.0}
    assert got["ordering_scaling[revision]"] == {
        "ratio": 3.0, "p50_ms": {"10000": 20.0, "100000": 22.0, "1000000": 60.0},
        "target": "≤ 1.5", "met": False,
    }  # fmt: skip


def test_the_bench_measures_every_documented_ordering_of_the_list():
    from grounding.api.filters import ORDERINGS

    assert tuple(ORDERINGS) == ratios.ORDERINGS
    # One scaling ratio per ordering, between the list's and the revisions'.
    keys = list(ratios.SCALING)
    assert keys == ["list_scaling", *(f"ordering_scaling[{o}]" for o in ORDERINGS),
                    "revisions_scaling", "inclusion_proof_scaling"]  # fmt: skip


def test_a_figure_of_another_run_gives_no_ratio():
    results = _results()
    results["bulk_register"]["run_id"] = "run-earlier"
    got = ratios.compute(results)
    assert got["copy_over_bulk"] == {
        "ratio": None, "min": None, "max": None, "rounds": 0, "registry": None, "limit": None,
        "unit": "links/s", "target": "≤ 2.0", "met": None,
    }  # fmt: skip
    # The ratios whose figures are all of this run are still there.
    assert got["fanout_over_bulk"]["ratio"] == 0.75


def test_a_step_that_did_not_run_gives_no_ratio_and_one_size_no_scaling():
    results = _results()
    del results["http_register"]
    results["reads_at_scale"]["scales"] = {"10000": {"list_p50_ms": 20.0}}
    got = ratios.compute(results)
    assert got["floor_over_register"]["ratio"] is None
    assert got["register_over_naive_peer"]["met"] is None
    assert got["list_scaling"] == {
        "ratio": None, "p50_ms": {"10000": 20.0}, "target": "≤ 1.5", "met": None,
    }  # fmt: skip
    # An older results.json, without the orderings: no figure, no ratio.
    assert got["ordering_scaling[-observed_at]"] == {
        "ratio": None, "p50_ms": {}, "target": "≤ 1.5", "met": None,
    }  # fmt: skip


def test_table_rows_show_registry_limit_ratio_target_and_verdict():
    relative, absolute = report.rows(_results())
    assert report.COLUMNS == ("path", "registry", "limit in the same run", "ratio", "target",
                              "met?")  # fmt: skip
    assert relative[0] == (
        "bulk registration (register_many, 1 writer) [copy_over_bulk]",
        "6,000 links/s",
        "COPY of its rows: 9,000 links/s",
        "1.50× (1 round)",
        "≤ 2.0",
        "yes",
    )
    assert relative[4][1:] == (
        "24 ms", "one psycopg query, no HTTP (the floor): 6 ms", "4.00× (1 round)", "≤ 3.0", "NO",
    )  # fmt: skip
    assert relative[6] == (
        "bulk registration with the transparency log [log_bulk]",
        "5,000 links/s",
        "the log off: 5,500 links/s",
        "1.10× (1 round)",
        "≤ 1.15",
        "yes",
    )
    assert relative[11][0] == "register with the event outbox vs without [outbox_over_register]"
    assert relative[11][3:] == ("1.05× (1 round)", "≤ 1.1", "yes")
    # A ratio whose step did not run: its row, with no figures.
    assert relative[12] == (
        "PDF import (a text PDF, BENCH_PDF_PAGES pages) [pdf_over_library]", "—",
        "the extraction library alone, same file, one process: —", "—", "≤ 1.5", "—",
    )  # fmt: skip
    assert relative[13] == (
        "list page p50 across corpus sizes [list_scaling]",
        "20 ms / 22 ms / 24 ms",
        "at 10,000 / 100,000 / 1,000,000",
        "1.20×",
        "≤ 1.5",
        "yes",
    )
    assert relative[19] == (
        "list page p50 across sizes, ordering=revision [ordering_scaling[revision]]",
        "20 ms / 22 ms / 60 ms",
        "at 10,000 / 100,000 / 1,000,000",
        "3×",
        "≤ 1.5",
        "NO",
    )
    assert relative[20][0] == "revisions/{1, 100, 1000} p50 [revisions_scaling]"
    assert relative[21] == (
        "inclusion proof p50 at 10k / 100k / 1M leaves [inclusion_proof_scaling]",
        "3 ms / 3.10 ms / 3.30 ms",
        "at 10,000 / 100,000 / 1,000,000",
        "1.10×",
        "≤ 1.5",
        "yes",
    )
    by_path = {row[0]: row for row in absolute}
    assert by_path["peak RSS, 100-document batch import"] == (
        "peak RSS, 100-document batch import", "310 MB", "—", "—", "< 300 MB", "NO",
    )  # fmt: skip
    assert by_path["HTTP register p99"][1:] == ("80.50 ms", "—", "—", "< 100 ms", "yes")
    assert by_path["checkpoint lag p99 under steady HTTP register load"][1:] == (
        "420 ms", "—", "—", "< 1,000 ms", "yes",
    )  # fmt: skip
    # Figures of steps that did not run (concurrency) are left out.
    assert not [p for p in by_path if p.startswith("32 writers")]


def test_the_limits_with_foreign_keys_are_context_rows_with_their_ratio():
    results = _results()
    results["bulk_register"]["copy_with_foreign_keys"] = {"links_per_s": 7500}
    results["wsp_import"]["copy"]["with_foreign_keys_observations_per_s"] = 3000
    _, absolute = report.rows(results)
    by_path = {row[0]: row for row in absolute}
    assert by_path["bulk registration beside a COPY with the foreign keys (context)"][1:] == (
        "6,000 links/s", "COPY: 7,500 links/s", "1.25×", "", "",
    )  # fmt: skip
    assert by_path["WSP import beside a COPY with the foreign keys (context)"][1:] == (
        "2,000 obs/s", "COPY: 3,000 obs/s", "1.50×", "", "",
    )  # fmt: skip
    # Not measured (an older results.json): no row.
    _, absolute = report.rows(_results())
    assert not [row for row in absolute if "foreign keys" in row[0]]
    # The headline ratios stay against the COPY without them.
    assert ratios.compute(results)["copy_over_bulk"]["ratio"] == 1.5


def test_rounds_take_turns_in_the_order_given():
    from bench import rounds

    calls = []

    def measure(name):
        def run(i):
            calls.append((name, i))
            return {"round": i}

        return run

    got = rounds.taking_turns(3, [("path", measure("path")), ("limit", measure("limit"))])
    # A, B, A, B, A, B: the path and its limit alternate, round by round.
    assert calls == [("path", 0), ("limit", 0), ("path", 1), ("limit", 1), ("path", 2),
                     ("limit", 2)]  # fmt: skip
    assert got == [{"path": {"round": i}, "limit": {"round": i}} for i in range(3)]


def test_rounds_of_several_parts_merge_by_index():
    from bench import rounds

    bulk = [{"bulk": {"on": 1}}, {"bulk": {"on": 2}}]
    http = [{"http": {"on": {"req_per_s": 5.0}}}, {"http": {"on": {"req_per_s": 6.0}}},
            {"http": {"on": {"req_per_s": 7.0}}}]  # fmt: skip
    more = [{"bulk": {"off": 3}}]
    assert rounds.merge(bulk, http, more) == [
        {"bulk": {"on": 1, "off": 3}, "http": {"on": {"req_per_s": 5.0}}},
        {"bulk": {"on": 2}, "http": {"on": {"req_per_s": 6.0}}},
        {"http": {"on": {"req_per_s": 7.0}}},
    ]
    assert rounds.merge() == []


def test_spread_is_the_median_with_min_and_max():
    from bench import rounds

    assert rounds.spread([2.81, 2.08, 2.66]) == {"median": 2.66, "min": 2.08, "max": 2.81, "n": 3}
    # An even count: the mean of the middle two.
    assert rounds.spread([1.0, 4.0, 2.0, 3.0]) == {"median": 2.5, "min": 1.0, "max": 4.0, "n": 4}
    assert rounds.spread([]) == {"median": None, "min": None, "max": None, "n": 0}


def test_a_ratio_of_rounds_is_their_median_with_its_spread():
    results = _results()
    results["http_register"]["rounds"] = [
        # floor / register per round: 2.08, 2.66, 2.81 (the issue's three runs)
        {"register": {"req_per_s": 400.0}, "bare_insert_floor": {"req_per_s": 832.0},
         "naive_peer": {"req_per_s": 200.0}},
        {"register": {"req_per_s": 300.0}, "bare_insert_floor": {"req_per_s": 798.0},
         "naive_peer": {"req_per_s": 250.0}},
        {"register": {"req_per_s": 350.0}, "bare_insert_floor": {"req_per_s": 983.5},
         "naive_peer": {"req_per_s": 350.0}},
        # A round that measured only one of the two figures counts for no ratio.
        {"register": {"req_per_s": 1.0}},
    ]  # fmt: skip
    got = ratios.compute(results)
    assert got["floor_over_register"] == {
        "ratio": 2.66, "min": 2.08, "max": 2.81, "rounds": 3,
        # The figures shown beside it: the rounds' medians, not the step's pooled ones.
        "registry": 350.0, "limit": 832.0, "unit": "req/s", "target": "≤ 2.0", "met": False,
    }  # fmt: skip
    # register / naive: 2.0, 1.2, 1.0
    assert got["register_over_naive_peer"]["ratio"] == 1.2
    assert (got["register_over_naive_peer"]["min"], got["register_over_naive_peer"]["max"]) == (
        1.0, 2.0,
    )  # fmt: skip
    relative, _ = report.rows(results)
    assert relative[2] == (
        "HTTP register (gunicorn) [floor_over_register]",
        "350 req/s",
        "bare one-insert DRF endpoint: 832 req/s",
        "2.66× (2.08–2.81, 3 rounds)",
        "≤ 2.0",
        "NO",
    )


def test_rounds_of_another_run_give_no_ratio():
    results = _results()
    results["bulk_register"]["rounds"] = [
        {"links_per_s": 5000, "copy": {"links_per_s": 9000}},
        {"links_per_s": 4000, "copy": {"links_per_s": 9000}},
        {"links_per_s": 4500, "copy": {"links_per_s": 9900}},
    ]
    assert ratios.compute(results)["copy_over_bulk"]["ratio"] == 2.2  # 1.8, 2.25, 2.2
    results["bulk_register"]["run_id"] = "run-earlier"
    assert ratios.compute(results)["copy_over_bulk"]["rounds"] == 0
