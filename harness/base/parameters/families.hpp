#pragma once
// The families whose built names the catalog checks (base/catalog.cpp: a pipes op's two
// parameters, dual_issue_<pair>), spelled here beside the entries that name their family: the
// catalog lies below the analysis headers that declare the families (kFamily).
namespace gpuprobe::catalog_family {

constexpr char kPipes[] = "pipes";
constexpr char kDualIssue[] = "dual_issue";

}  // namespace gpuprobe::catalog_family
