// SPDX-License-Identifier: Apache-2.0
// Seeds for what the backend reads from others: remote-write bodies as a sender builds them, a Prometheus server's
// answers, topology, token and configuration files as an operator writes them, the HTTP doors' request heads.
#include "fuzz/seeds.h"

#include "prometheus/remote.pb.h"

#include <snappy.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using fleetscope::fuzz::seeds::readText;
using fleetscope::fuzz::seeds::sourceDir;
using fleetscope::fuzz::seeds::write;

// --- remotewrite: a mode byte (fuzz_remotewrite.cpp), then the body.

std::string writeRequest(int hosts, int gpus, const char *nodeLabel, int samples, bool jobLabels)
{
    prometheus::WriteRequest request;
    for (const char *field : { "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL" }) {
        for (int h = 0; h < hosts; ++h) {
            for (int g = 0; g < gpus; ++g) {
                auto *ts = request.add_timeseries();
                const std::string host = "r01-k01-n0" + std::to_string(h + 1);
                const std::vector<std::pair<std::string, std::string>> labels
                    = { { "__name__", field }, { nodeLabel, host }, { "gpu", std::to_string(g) },
                          { "UUID", "GPU-5e0d3c2a-0000-4000-8000-00000000000" + std::to_string(g) },
                          { "modelName", "NVIDIA H100 80GB HBM3" }, { "DCGM_FI_DRIVER_VERSION", "550.90.07" },
                          { "job", "dcgm-exporter" } };
                for (const auto &[name, value] : labels) {
                    auto *l = ts->add_labels();
                    l->set_name(name);
                    l->set_value(value);
                }
                if (jobLabels) {
                    auto *l = ts->add_labels();
                    l->set_name("exported_pod");
                    l->set_value("train-llm-0");
                }
                for (int s = 0; s < samples; ++s) {
                    auto *sample = ts->add_samples();
                    sample->set_timestamp(1'700'000'000'000 + 15'000 * s);
                    sample->set_value(40.5 + g + s);
                }
            }
        }
    }
    return request.SerializeAsString();
}

std::string snappyOf(const std::string &bytes)
{
    std::string out;
    snappy::Compress(bytes.data(), bytes.size(), &out);
    return out;
}

void remoteWriteSeeds()
{
    const std::string small = writeRequest(1, 2, "Hostname", 1, false);
    const std::string wider = writeRequest(2, 4, "hostname", 2, true);
    prometheus::WriteRequest odd; // NaN and a stale marker's bits, a negative time, an empty value
    auto *ts = odd.add_timeseries();
    for (const auto &[name, value] :
        std::vector<std::pair<std::string, std::string>> { { "__name__", "DCGM_FI_DEV_XID_ERRORS" },
            { "Hostname", "n\xc3\xa9" }, { "gpu", "0" }, { "err_msg", "" } }) {
        auto *l = ts->add_labels();
        l->set_name(name);
        l->set_value(value);
    }
    ts->add_samples()->set_value(std::numeric_limits<double>::quiet_NaN());
    ts->add_samples()->set_timestamp(-1);
    const std::string oddBytes = odd.SerializeAsString();
    write("remotewrite", "snappy-small", std::string(1, '\0') + snappyOf(small));
    write("remotewrite", "snappy-wider", std::string(1, '\0') + snappyOf(wider));
    write("remotewrite", "snappy-odd", std::string(1, '\0') + snappyOf(oddBytes));
    write("remotewrite", "raw-small", std::string(1, '\1') + small);
    write("remotewrite", "raw-wider", std::string(1, '\1') + wider);
    write("remotewrite", "raw-odd", std::string(1, '\1') + oddBytes);
    write("remotewrite", "receiver-small", std::string(1, '\2') + snappyOf(small));
    write("remotewrite", "receiver-wider", std::string(1, '\2') + snappyOf(wider));
}

// --- promjson: a mode byte (fuzz_promjson.cpp), then the answer's body.

void promJsonSeeds()
{
    const std::string vector
        = R"({"status":"success","data":{"resultType":"vector","result":[)"
          R"({"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","Hostname":"r01-k01-n01","gpu":"0",)"
          R"("UUID":"GPU-5e0d3c2a-0000-4000-8000-000000000000","modelName":"NVIDIA H100 80GB HBM3",)"
          R"("DCGM_FI_DRIVER_VERSION":"550.90.07","hall":"h1","row":"r01","rack":"r01-k01",)"
          R"("exported_namespace":"ml","exported_pod":"train-0","container":"main"},)"
          R"("value":[1700000100.000,"41"]},)"
          R"({"metric":{"hostname":"r01-k01-n02","gpu":"1","hpc_job":"4711","hpc_user":"ada"},)"
          R"("value":[1700000100.5,"NaN"]},)"
          R"({"metric":{"Hostname":"r01-k01-n02","gpu":"2"},"value":[1700000100,"+Inf"]}]}})";
    const std::string matrix = R"({"status":"success","data":{"resultType":"matrix","result":[)"
                               R"({"metric":{"Hostname":"r01-k01-n01","gpu":"0"},"values":[[1700000000,"40"],)"
                               R"([1700000015.000,"41.5"],[1700000030.25,"-Inf"]]},)"
                               R"({"metric":{"Hostname":"r01-k01-n01","gpu":"1"},"values":[[1700000000,"1e3"]]},)"
                               R"({"metric":{"hostname":"r01-k01-n02","gpu":"0"},"values":[]}]}})";
    const std::string error
        = R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": parse error"})";
    write("promjson", "vector-labels", std::string(1, '\0') + vector);
    write("promjson", "vector-placement", std::string(1, '\1') + vector);
    write("promjson", "vector-jobs", std::string(1, '\2') + vector);
    write("promjson", "matrix", std::string(1, '\3') + matrix);
    write("promjson", "error", std::string(1, '\0') + error);
    write("promjson", "empty-vector",
        std::string(1, '\1') + R"({"status":"success","data":{"resultType":"vector","result":[]}})");
}

// --- topologyfile: a syntax byte (even JSON, odd YAML), then the file.

void topologyFileSeeds()
{
    write("topologyfile", "example-json",
        std::string(1, '\0') + readText(sourceDir() / "docs" / "topology-example.json"));
    write("topologyfile", "example-yaml",
        std::string(1, '\1') + readText(sourceDir() / "docs" / "topology-example.yaml"));
    write("topologyfile", "nvl72-json",
        std::string(1, '\0')
            + R"({"site":"lab","gpusPerNode":4,"halls":[{"name":"h1","rows":[{"name":"r01","racks":[)"
              R"({"name":"r01-k01","nvlinkDomain":true,"hosts":["t01","t02",{"hostname":"t03","gpus":2}]},)"
              R"({"name":"r01-k02","gpusPerNode":8,"hosts":["n01"]}]}]}]})");
    write("topologyfile", "small-yaml",
        std::string(1, '\1')
            + "site: lab\ngpusPerNode: 8\nhalls:\n  - name: h1\n    rows:\n      - name: \"07\"\n        racks:\n"
              "          - name: r07-k01\n            hosts: [n01, {hostname: n02, gpus: 4}]\n"
              "          - name: r07-k02\n            nvlinkDomain: false\n            hosts:\n              - n03\n");
}

// --- httphead: one connection's bytes, requests one after another.

void httpHeadSeeds()
{
    write("httphead", "scrape",
        "GET /metrics HTTP/1.1\r\nHost: r01-k01-n01:9400\r\nUser-Agent: Prometheus/2.53.0\r\n"
        "Accept: application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1\r\n"
        "Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n");
    write("httphead", "scrapes-pipelined",
        "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    write("httphead", "remote-write",
        "POST /api/v1/write HTTP/1.1\r\nHost: fleetscope:9201\r\nContent-Encoding: snappy\r\n"
        "Content-Type: application/x-protobuf\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: 5\r\n"
        "\r\nabcdePOST /api/v1/write HTTP/1.1\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n");
    write("httphead", "http10-keep-alive",
        "GET /metrics?x=1 HTTP/1.0\r\nConnection: Keep-Alive, Upgrade\r\n\r\nGET / HTTP/1.0\r\n\r\n");
    write("httphead", "chunked",
        "POST /api/v1/write HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n");
}

// --- tokenfile: the file's text.

void tokenFileSeeds()
{
    write("tokenfile", "two-tokens",
        "# console tokens, one per line\n3q2+7w==AbCdEf0123456789\n\n  console-wall-7f3a  \r\n#retired: old\n");
    write("tokenfile", "one-token", "s3cr3t-t0k3n");
    write("tokenfile", "comments-only", "# none yet\n\n");
}

// --- configfile: a mode byte (fuzz_configfile.cpp: even the text alone, odd through the command line), then the
// file.

void configFileSeeds()
{
    const std::string packaged = readText(sourceDir() / "packaging" / "backend.yaml");
    write("configfile", "packaged-text", std::string(1, '\0') + packaged);
    write("configfile", "packaged-options", std::string(1, '\1') + packaged);
    const std::string small = "listen: 127.0.0.1:50051\ngpus: 512\nscenario: cooling-failure\n"
                              "insecure-listen: true\nexporter-listen: \"127.0.0.1:9400\"\n";
    write("configfile", "small-text", std::string(1, '\0') + small);
    write("configfile", "small-options", std::string(1, '\1') + small);
    write("configfile", "bad-flag", std::string(1, '\1') + "insecure-listen: maybe\n");
    write("configfile", "list", std::string(1, '\0') + "allow:\n  - 10.0.0.0/8\n  - 192.168.0.0/16\ngpus: [1, 2]\n");
}

} // namespace

namespace fleetscope::fuzz::seeds {

void backendSeeds()
{
    remoteWriteSeeds();
    promJsonSeeds();
    topologyFileSeeds();
    httpHeadSeeds();
    tokenFileSeeds();
    configFileSeeds();
}

} // namespace fleetscope::fuzz::seeds
